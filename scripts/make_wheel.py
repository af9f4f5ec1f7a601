#!/usr/bin/env python3
"""Builds oomlint's wheel from an installed tree (`cmake --install --prefix STAGE`), with the
standard library only.

    make_wheel.py STAGE VERSION GLIBC OUTDIR    (GLIBC: the binaries' floor, e.g. 2.35)

Layout, as ruff's wheel has it: the executable is a script of the wheel
(`oomlint-X.Y.Z.data/scripts/oomlint`, installed into the environment's bin/), the C++ front end
and Clang's builtin headers are data under `<prefix>/lib/oomlint` (where the executable looks,
`../lib/oomlint` beside itself), and a small `oomlint` package gives `python -m oomlint`. The tag
is `py3-none-manylinux_2_NN_x86_64`, NN from the highest glibc symbol version the binaries need.
"""
import base64
import hashlib
import os
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def main():
    stage, version, glibc, outdir = sys.argv[1:5]
    major, minor = glibc.split(".")[:2]
    tag = f"py3-none-manylinux_{major}_{minor}_x86_64"
    name = f"oomlint-{version}-{tag}.whl"
    data_dir = f"oomlint-{version}.data"
    info_dir = f"oomlint-{version}.dist-info"
    entries = []  # (arcname, bytes, executable)

    def add_file(arcname, path, executable=False):
        with open(path, "rb") as fh:
            entries.append((arcname, fh.read(), executable))

    for file in ("__init__.py", "__main__.py", "trace.py"):
        add_file(f"oomlint/{file}", os.path.join(ROOT, "packaging", "python", "oomlint", file))
    add_file(f"{data_dir}/scripts/oomlint", os.path.join(stage, "bin", "oomlint"), executable=True)
    # lib/oomlint: the C++ front end and the trace bootstrap; include/oomlint: oomlint/trace.h,
    # installed under the environment's prefix (<venv>/include/oomlint/trace.h).
    for folder, dirs, files in [w for top in ("lib/oomlint", "include/oomlint") for w in os.walk(os.path.join(stage, top))]:
        dirs.sort()
        for file in sorted(files):
            path = os.path.join(folder, file)
            rel = os.path.relpath(path, stage).replace(os.sep, "/")
            add_file(f"{data_dir}/data/{rel}", path)
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        readme = fh.read()
    metadata = (
        "Metadata-Version: 2.1\n"
        "Name: oomlint\n"
        f"Version: {version}\n"
        "Summary: Static analyzer for GPU-memory anti-patterns in PyTorch training code\n"
        "License: MIT\n"
        "License-File: LICENSE\n"
        "Classifier: License :: OSI Approved :: MIT License\n"
        "Classifier: Operating System :: POSIX :: Linux\n"
        "Classifier: Programming Language :: C++\n"
        "Classifier: Topic :: Software Development :: Quality Assurance\n"
        "Requires-Python: >=3.7\n"
        "Description-Content-Type: text/markdown\n"
        "\n" + readme
    )
    entries.append((f"{info_dir}/METADATA", metadata.encode(), False))
    wheel = ("Wheel-Version: 1.0\n"
             "Generator: oomlint scripts/make_wheel.py\n"
             "Root-Is-Purelib: false\n"
             f"Tag: {tag}\n")
    entries.append((f"{info_dir}/WHEEL", wheel.encode(), False))
    add_file(f"{info_dir}/licenses/LICENSE", os.path.join(ROOT, "LICENSE"))
    record = [record_line(arc, data) for arc, data, _ in entries] + [f"{info_dir}/RECORD,,"]
    entries.append((f"{info_dir}/RECORD", ("\n".join(record) + "\n").encode(), False))

    os.makedirs(outdir, exist_ok=True)
    out = os.path.join(outdir, name)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for arcname, data, executable in entries:
            info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))  # reproducible
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = ((0o755 if executable else 0o644) | 0o100000) << 16
            zf.writestr(info, data)
    print(out)


if __name__ == "__main__":
    main()
