"""oomlint: finds GPU-memory anti-patterns in PyTorch training code.

The wheel installs the `oomlint` executable into the environment's scripts folder (on PATH once
the environment is active) and its C++ front end under `<prefix>/lib/oomlint`. This module only
finds the executable, for `python -m oomlint` and for tools that want its path.
"""
import os
import sys
import sysconfig


def find_oomlint_bin() -> str:
    """The path of the installed `oomlint` executable."""
    name = "oomlint" + (sysconfig.get_config_var("EXE") or "")
    candidates = [sysconfig.get_path("scripts"), sysconfig.get_path("scripts", f"{os.name}_user"),
                  os.path.dirname(sys.executable)]
    for folder in candidates:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(f"oomlint executable not found in {', '.join(candidates)}")
