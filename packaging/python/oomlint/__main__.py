"""`python -m oomlint ...` runs the installed executable with the same arguments."""
import os
import sys

from oomlint import find_oomlint_bin


def main() -> None:
    binary = find_oomlint_bin()
    # `check --verify` runs the probes' PyTorch twins with this interpreter, the one whose
    # environment has the user's torch, unless told otherwise.
    os.environ.setdefault("OOMLINT_PYTHON", sys.executable)
    if sys.platform == "win32":  # pragma: no cover - the wheel is for Linux
        import subprocess
        sys.exit(subprocess.call([binary, *sys.argv[1:]]))
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
