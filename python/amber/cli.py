"""The `amber` command line: `amber bench` reruns the benchmark studies; `amber ls`, `amber show`
and `amber verify` look into archives (local paths and URLs); `amber proto stubs` and
`amber proto decode` help with Protocol Buffers. Heavy imports wait until a
command runs so that `amber --help` stays instant."""

from __future__ import annotations

import argparse
import io
import itertools
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any


def _names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected a comma-separated list of names")
    return names


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    from amber._native import __version__

    parser = argparse.ArgumentParser(prog="amber", description="amber command line tools")
    parser.add_argument("--version", action="version", version=f"amber {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    bench = commands.add_parser(
        "bench",
        help="rerun the benchmark studies against the tools users pick today",
        description="Time each part of amber against the tools users pick today for the same job "
        "(for the codec: pickle, msgpack, JSON and CBOR codecs), in one process, and write "
        "report.md, results.json and plots. Every contender's result is checked before timing.",
    )
    size = bench.add_mutually_exclusive_group()
    size.add_argument(
        "--quick",
        action="store_true",
        help="short run (about 3.5 minutes on 2 cores): smaller workloads, fewer repeats",
    )
    size.add_argument("--tiny", action="store_true", help=argparse.SUPPRESS)  # tests only
    bench.add_argument("--studies", type=_names, help="comma-separated studies (default: all)")
    bench.add_argument(
        "--contenders",
        "--codecs",
        dest="contenders",
        type=_names,
        help="comma-separated contenders, of any part (default: all); the part's baseline is "
        "always added",
    )
    bench.add_argument(
        "--out",
        type=Path,
        default=Path("bench-out"),
        help="output directory (default: %(default)s)",
    )
    bench.add_argument("--repeat", type=_positive, help="samples per series; the median is kept")
    bench.add_argument(
        "--list", action="store_true", help="list studies and each part's contenders, then exit"
    )
    bench.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    bench.add_argument(
        "--from",
        dest="from_results",
        type=Path,
        metavar="RESULTS",
        help="time nothing: rebuild report.md and the plots in --out from the results.json of an "
        "earlier run",
    )
    ls = commands.add_parser(
        "ls",
        help="list an archive's keys and sizes",
        description="List the keys of an archive (amber, .npz or DataZip) with the size of each "
        "in the file and uncompressed, the space compression saved, the compression method, "
        "encoding and type, under a header and over a total when it prints to a terminal, one "
        "line per key otherwise (for scripts). Sizes are in KiB, MiB and GiB (1,024 bytes "
        "each) unless --bytes is given; control characters in keys and types are printed "
        "escaped.",
    )
    ls.add_argument("target", help="archive path or URL")
    ls.add_argument(
        "--header",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="print the header and the total (default: when printing to a terminal)",
    )
    ls_format = ls.add_mutually_exclusive_group()
    ls_format.add_argument("--bytes", action="store_true", help="sizes as exact byte counts")
    ls_format.add_argument(
        "--json",
        action="store_true",
        help="print a JSON array, one object per key: 'key', 'size' and 'compressed_size' "
        "(summed over its entries), then what Archive.info returns",
    )
    show = commands.add_parser(
        "show",
        help="print one key of an archive, or the values of a codec file",
        description="Print the value of KEY in an archive. For a file of amber codec frames "
        "(written by amber.dump), print each frame's value instead (no KEY). Control "
        "characters in the output are printed escaped.",
    )
    show.add_argument("target", help="archive path or URL, or a local file of codec frames")
    show.add_argument("key", nargs="?", help="the key to print (amber ls lists them)")
    verify = commands.add_parser(
        "verify",
        help="check every entry of an archive",
        description="Read every entry of an archive and check it against the zip directory "
        "(size, CRC-32) and the manifest (BLAKE3 hash). Prints each problem found on stderr and "
        "exits 1 if there is any.",
    )
    verify.add_argument("target", help="archive path or URL")
    proto = commands.add_parser(
        "proto",
        help="Protocol Buffers tools: typing stubs, decoding bytes",
        description="Tools for amber.proto: write typing stubs for the message classes of "
        ".proto files, or print a message read from bytes.",
    )
    tools = proto.add_subparsers(dest="tool", required=True, metavar="TOOL")
    stubs = tools.add_parser(
        "stubs",
        help="write .pyi stubs for the messages of .proto files",
        description="Write a .pyi for a module that binds the top-level messages and enums of "
        "these files by their short names (as Google's _pb2 modules do), so type checkers see "
        "the fields.",
    )
    stubs.add_argument("files", nargs="+", help=".proto files")
    stubs.add_argument(
        "-I", "--include", action="append", default=[], help="import directory (repeatable)"
    )
    stubs.add_argument("-o", "--out", type=Path, help="output file (default: stdout)")
    decode = tools.add_parser(
        "decode",
        help="print a message read from stdin",
        description="Read one serialized message of TYPE from stdin and print it in the text "
        "format (or as ProtoJSON with --json). Exits 1 if the bytes are not a valid message.",
    )
    decode.add_argument("file", help=".proto file declaring the type")
    decode.add_argument("type", help="the message type's full name, e.g. shop.Order")
    decode.add_argument(
        "-I", "--include", action="append", default=[], help="import directory (repeatable)"
    )
    decode.add_argument("--json", action="store_true", help="print ProtoJSON instead")
    return parser


# --- ls, show, verify: archives as a shell user meets them ----------------------------------


class _Failed(Exception):
    """A command's error, said in one line: `amber CMD: TARGET: message`, and its exit status:
    1, or 2 for a command line that does not fit the file (as argparse's usage errors)."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def _escaped(text: object, *, backslash: bool = True) -> str:
    """`text` with every character a terminal would act on or hide written as a Python escape
    (`\\x1b`, `\\n`, `\\u202e`, `\\udc80`): C0 and C1 controls, DEL, bidi and other format
    characters, separators other than the space, unpaired surrogates, unassigned code points.
    A key, type or message from a file then cannot move the cursor, retitle the terminal,
    reorder text or start a line of its own. Backslashes are doubled too unless `backslash` is
    false (for messages, whose names Python has already quoted)."""
    text = str(text)
    if text.isprintable() and not (backslash and "\\" in text):
        return text
    out = []
    for ch in text:
        if ch == "\\" and backslash:
            out.append("\\\\")
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(repr(ch)[1:-1])
    return "".join(out)


def _human(n: int) -> str:
    """Bytes in KiB, MiB, ... as `ls -lh` does (1,024 each), with a unit after a space."""
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        value /= 1024
        if value < 1023.95 or unit == "PiB":
            return f"{value:.1f} {unit}" if value < 9.95 else f"{value:.0f} {unit}"
    raise AssertionError("unreachable")


def _saved(size: int, stored: int) -> str:
    """The share of `size` that compression saved, rounded down, as `unzip -v` shows it."""
    if size == 0:
        return "0%"
    return f"{(size - stored) * 100 // size}%"


def _describe(error: BaseException, target: str) -> str:
    """One line for an error opening or reading `target`."""
    from amber import AmberError, ArchiveError

    if isinstance(error, FileNotFoundError):
        if error.errno is not None:
            return "no such file"
        # fsspec says FileNotFoundError(url) for whatever failed; the cause says what did
        cause = error.__cause__
        status = getattr(cause, "status", None)
        if isinstance(status, int) and status != 404:
            return f"HTTP {status} {getattr(cause, 'message', '')}".rstrip()
        if cause is not None and status is None:
            return f"cannot read it: {str(cause) or type(cause).__name__}"
        return "not found"
    if isinstance(error, IsADirectoryError):
        return "is a directory, not an archive file"
    if isinstance(error, PermissionError):
        return "permission denied"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror[0].lower() + error.strerror[1:]
    message = str(error).strip() or type(error).__name__
    for prefix in (f"{target}: ", f"{target} "):  # the library's messages may name the file
        if message.startswith(prefix):
            message = message[len(prefix) :]
            break
    if isinstance(error, ArchiveError) and error.kind == "not_zip":
        head = _head(target)  # None for a URL: no guesses
        if head is not None and head[:1] == _FRAME_MAGIC:
            return (
                "an amber codec file (frames written by amber.dump), not an archive: "
                "`amber show FILE` prints its values"
            )
        if head == b"":
            return "an empty file, not an archive"
        if head is not None and not head.startswith(b"PK"):
            return f"not an archive (not a zip file): {message}"
    if not isinstance(error, (AmberError, OSError)):
        return f"{type(error).__name__}: {message}"
    return message


_FRAME_MAGIC = b"\xab"  # the first byte of every amber codec frame (format spec)


def _head(target: str, n: int = 4) -> bytes | None:
    """The first bytes of a local file, or None for a URL or a file that cannot be read."""
    from amber.archive._source import is_url

    if is_url(target):
        return None
    try:
        with open(target, "rb") as f:
            return f.read(n)
    except OSError:
        return None


def _open(target: str) -> Any:
    from amber import Archive

    try:
        return Archive(target)
    except Exception as e:
        raise _Failed(_describe(e, target)) from e


def _sizes(info: dict[str, Any]) -> tuple[int, int]:
    """A key's uncompressed size and its size in the file, summed over its entries."""
    entries = info["entries"].values()
    return sum(e["size"] for e in entries), sum(e["compressed_size"] for e in entries)


def _ls(args: argparse.Namespace) -> int:
    with _open(args.target) as archive:
        try:
            infos = [(key, archive.info(key)) for key in archive]
        except Exception as e:
            raise _Failed(_describe(e, args.target)) from e
        shared = archive.format == "datazip"  # every key's data is in one attributes file
    if args.json:
        import json

        objects = []
        for key, info in infos:
            size, stored = _sizes(info)
            objects.append({"key": key, "size": size, "compressed_size": stored, **info})
        # ensure_ascii: control characters and surrogates come out as \u escapes
        print("[" + ",\n".join(json.dumps(obj, ensure_ascii=True) for obj in objects) + "]")
        return 0
    number = str if args.bytes else _human
    table = [["STORED", "SIZE", "SAVED", "METHOD", "ENCODING", "TYPE", "KEY"]]
    seen: dict[str, tuple[int, int]] = {}
    for key, info in infos:
        size, stored = _sizes(info)
        for name, entry in info["entries"].items():
            seen[name] = (entry["size"], entry["compressed_size"])
        methods = ",".join(sorted({str(e["method"]) for e in info["entries"].values()}))
        cells = ["-"] * 3 if shared else [number(stored), number(size), _saved(size, stored)]
        table.append([*cells, methods, info["encoding"], info["type"], key])
    size = sum(s for s, _ in seen.values())
    stored = sum(c for _, c in seen.values())
    count = f"{len(infos)} key" + ("" if len(infos) == 1 else "s")
    sums = ["-"] * 3 if shared else [number(stored), number(size), _saved(size, stored)]
    header = sys.stdout.isatty() if args.header is None else args.header
    rows = [*table, [*sums, "", "", "", count]] if header else table[1:]
    lines = [[_escaped(cell) for cell in row] for row in rows]
    widths = [max((len(line[i]) for line in lines), default=0) for i in range(6)]
    if header:
        lines.insert(-1, [*("-" * widths[i] for i in range(3)), "", "", "", "-" * len(count)])
    for line in lines:
        right = [cell.rjust(width) for cell, width in zip(line[:3], widths, strict=False)]
        left = [cell.ljust(width) for cell, width in zip(line[3:6], widths[3:], strict=False)]
        print("  ".join([*right, *left, line[6]]).rstrip())
    return 0


def _show(args: argparse.Namespace) -> int:
    import pprint

    if _head(args.target, 1) == _FRAME_MAGIC:
        return _show_frames(args)
    with _open(args.target) as archive:
        if args.key is None:
            raise _Failed(f"an archive of {len(archive)} keys: name one (amber ls lists them)", 2)
        if args.key not in archive:
            import difflib

            close = difflib.get_close_matches(args.key, list(archive), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise _Failed(f"no key {args.key!r}{hint}")
        try:
            value = archive[args.key]
        except Exception as e:
            raise _Failed(f"key {args.key!r}: {_describe(e, args.target)}") from e
        text = pprint.pformat(value, width=100, sort_dicts=False)
    print("\n".join(_escaped(line, backslash=False) for line in text.split("\n")))
    return 0


def _show_frames(args: argparse.Namespace) -> int:
    """Each value of a file of codec frames, in order."""
    import pprint

    import amber

    if args.key is not None:
        raise _Failed(
            "an amber codec file (frames written by amber.dump) has no keys: "
            "`amber show FILE` prints its values",
            2,
        )
    try:
        f = open(args.target, "rb")  # noqa: SIM115 - closed below
    except OSError as e:
        raise _Failed(_describe(e, args.target)) from e
    with f:
        for i in itertools.count():
            try:
                value = amber.load(f)
            except EOFError:
                return 0
            except Exception as e:
                raise _Failed(f"frame {i}: {_describe(e, args.target)}") from e
            text = pprint.pformat(value, width=100, sort_dicts=False)
            print("\n".join(_escaped(line, backslash=False) for line in text.split("\n")))
    raise AssertionError("unreachable")


def _verify(args: argparse.Namespace) -> int:
    with _open(args.target) as archive:
        try:
            problems = archive.verify()
        except Exception as e:
            raise _Failed(_describe(e, args.target)) from e
        count = len(archive)
        kind = archive.format
    target = _escaped(args.target)
    for problem in problems:
        print(f"amber verify: {target}: {_escaped(problem, backslash=False)}", file=sys.stderr)
    if problems:
        return 1
    checked = {
        "amber": "size, CRC-32 and BLAKE3 hash",
        "npz": "size and CRC-32 (an .npz file has no hashes)",
        "datazip": "size and CRC-32 (a DataZip file has no hashes)",
    }.get(kind, "size and CRC-32")
    print(f"{target}: {count} key{'' if count == 1 else 's'}, every entry's {checked} checked")
    return 0


def _quietly(run: Callable[[], int], command: str, target: str | None) -> int:
    """Runs a command so that the user sees one line for an error, never a traceback: exit
    status 1 for an error, 130 for Ctrl-C, 141 (as for SIGPIPE) when the reader of stdout went
    away (`amber ls big.zip | head -1`)."""
    try:
        status = run()
        sys.stdout.flush()  # a closed pipe shows here, while BrokenPipeError is caught
        return status
    except _Failed as e:
        where = f"{_escaped(target)}: " if target is not None else ""
        print(f"amber {command}: {where}{_escaped(e, backslash=False)}", file=sys.stderr)
        return e.status
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Python flushes stdout again at exit, into the same closed pipe: point it elsewhere.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


def _proto(args: argparse.Namespace) -> int:
    import amber.proto
    from amber.proto._tools import stubs

    try:
        if args.tool == "stubs":
            ns = amber.proto.load(*args.files, include=args.include)
            names = {Path(f).name for f in args.files}
            text = stubs(ns, files=[f for f in ns.types_files() if Path(f).name in names])
            if args.out is None:
                sys.stdout.write(text)
            else:
                args.out.write_text(text)
            return 0
        ns = amber.proto.load(args.file, include=args.include)
        cls = ns.types.get(args.type)
        if cls is None:
            # Full names that end with what was typed: `Order` for `shop.Order`.
            near = sorted(n for n in ns.types if n.endswith("." + args.type.lstrip(".")))
            hint = f" (did you mean {', '.join(near)}?)" if near else ""
            print(f"amber proto decode: no message type {args.type!r}{hint}", file=sys.stderr)
            return 2
        message = cls.FromString(sys.stdin.buffer.read())
        if args.json:
            print(message.to_json())
        else:
            sys.stdout.write(message.to_text())
        return 0
    except amber.AmberError as e:
        print(f"amber proto {args.tool}: {e}", file=sys.stderr)
        return 1


def _bench(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from amber import bench

    if args.list:
        _list(bench)
        return 0
    if args.from_results is not None:
        try:
            bench.rerender(args.from_results, args.out)
        except (bench.ResultsError, bench.UnknownNameError) as exc:
            print(f"amber bench: error: {exc.args[0]}", file=sys.stderr)
            return 2
        return 0
    config = bench.BenchConfig(
        out_dir=args.out,
        mode="tiny" if args.tiny else "quick" if args.quick else "full",
        studies=args.studies,
        contenders=args.contenders,
        repeat=args.repeat,
        progress=not args.no_progress,
        command=shlex.join(["amber", *argv]),
    )
    try:
        bench.run(config)
    except bench.UnknownNameError as exc:
        print(f"amber bench: error: {exc.args[0]}", file=sys.stderr)
        return 2
    return 0


def _list(bench: ModuleType) -> None:
    """One line per study, then one per contender of each part (the baseline marked)."""
    for name in bench.study_names():
        study = bench.get_study(name)
        print(f"study  {name:10} {study.description}")
    for part_name in bench.part_names():
        part = bench.get_part(part_name)
        found, skipped = part.resolve()
        for contender in found:
            mark = " (baseline)" if contender.name == part.baseline else ""
            print(f"{part.name}  {contender.name:14} {contender.note}{mark}".rstrip())
        for skip in skipped:
            print(f"{part.name}  {skip.name:14} skipped: {skip.reason}")


def rerun(study: str, argv: Sequence[str]) -> int:
    """`amber bench --studies STUDY ARGV`, writing to bench-out/STUDY unless `--out` is given:
    what each script in benches/ runs to reproduce one claim."""
    args = list(argv)
    if not any(a == "--out" or a.startswith("--out=") for a in args):
        args += ["--out", f"bench-out/{study}"]
    return main(["bench", "--studies", study, *args])


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    if isinstance(sys.stdout, io.TextIOWrapper):  # a terminal that cannot show a character
        sys.stdout.reconfigure(errors="backslashreplace")
    if args.command == "bench":
        return _quietly(lambda: _bench(args, argv), "bench", None)
    commands = {"ls": _ls, "show": _show, "verify": _verify, "proto": _proto}
    target = getattr(args, "target", None)
    return _quietly(lambda: commands[args.command](args), args.command, target)
