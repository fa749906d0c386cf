"""The end of a checker in scripts/: its problems, one a line, then its summary
line; exit status 1 when there is a problem, else 0.

    from verdict import verdict        (scripts/ is the running script's folder)
    return verdict(problems, f"check-x: {n} things, {len(problems)} wrong")
"""


def verdict(problems, summary):
    for problem in problems:
        print(problem)
    print(summary)
    return 1 if problems else 0
