"""``python -m zehal --includes | --cmakedir | --libdir | --ze-driver``, and the ``zehal`` command's
sub-commands (``python -m zehal info``)."""

from __future__ import annotations

import sys

from . import cli


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("--includes", "--cmakedir", "--libdir", "--ze-driver", "--version"):
        import zehal

        if len(args) != 1:
            print(f"usage: python -m zehal {args[0]}", file=sys.stderr)
            return 2
        if args[0] == "--includes":
            print(f"-I{zehal.get_include()}")
        elif args[0] == "--cmakedir":
            print(zehal.get_cmake_dir())
        elif args[0] == "--libdir":
            print(zehal.get_library_dir())
        elif args[0] == "--ze-driver":
            try:
                print(zehal.ze_driver_path())
            except zehal.UnsupportedError as e:
                print(e, file=sys.stderr)
                return 1
        else:
            print(zehal.__version__)
        return 0
    return cli.main(args)


if __name__ == "__main__":
    sys.exit(main())
