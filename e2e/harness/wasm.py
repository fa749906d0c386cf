"""A WebAssembly module's sections, read from its bytes: what `kwctl annotate` wrote
(e2e/suites/test_oci.py) and what the code is made of (scripts/module-size.py)."""


def leb128(data, at):
    """An unsigned LEB128 at `at`: (value, the offset after it)."""
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def sections(data):
    """(id, body) of each section, in order."""
    if data[:4] != b"\0asm":
        raise ValueError("not a WebAssembly module")
    at = 8
    while at < len(data):
        size, start = leb128(data, at + 1)
        yield data[at], data[start:start + size]
        at = start + size


def custom_section(data, name):
    """The body of the custom section `name` after its name, or None."""
    for section, body in sections(data):
        if section == 0:
            length, at = leb128(body, 0)
            if body[at:at + length] == name.encode():
                return body[at + length:]
    return None
