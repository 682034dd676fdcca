"""`python -m amber ...` runs the `amber` command line."""

from amber.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
