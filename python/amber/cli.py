"""The `amber` command line: `amber bench` reruns the benchmark studies; `amber ls`, `amber show`
and `amber verify` look into archives (local paths and URLs); `amber proto stubs` and
`amber proto decode` help with Protocol Buffers. Heavy imports wait until a
command runs so that `amber --help` stays instant."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType


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
    ls = commands.add_parser(
        "ls",
        help="list an archive's keys",
        description="List the keys of an amber archive with their type, encoding and stored size.",
    )
    ls.add_argument("target", help="archive path or URL")
    show = commands.add_parser(
        "show",
        help="print one key of an archive",
        description="Print the value of one key of an archive.",
    )
    show.add_argument("target", help="archive path or URL")
    show.add_argument("key")
    verify = commands.add_parser(
        "verify",
        help="check every entry of an archive",
        description="Read every entry of an archive and check its size, CRC-32 and BLAKE3 hash "
        "against the zip directory and the manifest. Exits 1 if anything is wrong.",
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


def _ls(args: argparse.Namespace) -> int:
    from amber import Archive

    with Archive(args.target) as archive:
        for key in archive:
            info = archive.info(key)
            stored = sum(e["size"] for e in info["entries"].values())
            methods = sorted({e["method"] for e in info["entries"].values()})
            print(f"{key}\t{info['type']}\t{info['encoding']}\t{stored}\t{','.join(methods)}")
    return 0


def _show(args: argparse.Namespace) -> int:
    import pprint

    from amber import Archive

    with Archive(args.target) as archive:
        try:
            value = archive[args.key]
        except KeyError:
            print(f"amber show: no key {args.key!r} in {args.target}", file=sys.stderr)
            return 2
        pprint.pprint(value, width=100, sort_dicts=False)
    return 0


def _verify(args: argparse.Namespace) -> int:
    from amber import AmberError, Archive

    try:
        with Archive(args.target) as archive:
            problems = archive.verify()
    except AmberError as e:
        print(f"amber verify: {args.target}: {e}", file=sys.stderr)
        return 1
    for problem in problems:
        print(f"amber verify: {args.target}: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"{args.target}: {len(archive)} keys, every entry checked")
    return 0


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
            print(f"amber proto decode: no message type {args.type!r}", file=sys.stderr)
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
    if args.command == "bench":
        return _bench(args, argv)
    commands = {"ls": _ls, "show": _show, "verify": _verify, "proto": _proto}
    return commands[args.command](args)
