"""`amber proto stubs`: the stubs it writes, checked by the type checkers users run.

For several schemas (the guide's shop, proto2 with groups, extensions and `required`, an
editions file, the well-known types, nested messages and enums with maps of messages and a
oneof, names that clash with Python keywords, builtins and Message's methods), the stub is
written next to the module it describes (the module its header shows), and two programs use
them: one as the README and the guide do, which must run and must pass `mypy --strict` (and
pyright's strict mode, when pyright is installed), and one whose lines marked `# E` give a field
a value of the wrong type, each of which both checkers must report (and nothing else). The
stubs of Google's conformance messages must pass as well. One run of each checker covers
everything."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import amber.proto as P
from amber.proto import _wkt
from amber.proto._tools import stubs

# name: (the .proto files under the include root, the file stubbed, a program using the stub as
# the docs do, a program whose lines marked `# E` a type checker must refuse)
SCHEMAS: dict[str, tuple[dict[str, str], str, str, str]] = {}

SCHEMAS["shop_pb"] = (
    {
        "shop/common.proto": """
            syntax = "proto3";
            package shop;
            message Money { string currency = 1; int64 units = 2; }
        """,
        "shop/order.proto": """
            syntax = "proto3";
            package shop;
            import "google/protobuf/timestamp.proto";
            import "shop/common.proto";
            message Order {
              message Item { string sku = 1; int32 qty = 2; }
              enum Status { NEW = 0; PAID = 1; }
              int64 id = 1;
              repeated Item items = 2;
              Status status = 3;
              Item main = 4;
              repeated int32 nums = 5;
              map<string, int32> counts = 6;
              google.protobuf.Timestamp created = 7;
              Money total = 8;
              optional string note = 9;
              bytes blob = 10;
              double weight = 11;
              bool gift = 12;
            }
        """,
    },
    "shop/order.proto",
    """
    from datetime import datetime, timezone

    from shop_pb import Order

    order = Order(id=7, items=[{"sku": "a", "qty": 2}], status="PAID")
    data: bytes = order.SerializeToString()
    assert Order.FromString(data) == order
    print(order)
    text: str = order.to_json()
    parsed = Order.from_dict({"id": "7"})
    assert parsed.id == 7 and text

    o = Order(id=7, main={"sku": "a"}, nums=[1, 2], counts={"x": 1}, total={"units": 3})
    o.main.qty = 1
    o.items.append({"sku": "b", "qty": 1})
    o.items.extend([Order.Item(sku="c"), {"sku": "d"}])
    added: Order.Item = o.items.add(sku="e", qty=5)
    sku: str = o.items[0].sku
    qtys: list[int] = [item.qty for item in o.items]
    first_two: list[Order.Item] = o.items[:2]
    o.nums.append(3)
    o.nums[0] = 10
    total: int = sum(o.nums)
    o.counts["y"] = 2
    count: int = o.counts["x"] + o.counts.get("z", 0)
    for key, value in o.counts.items():
        assert key.isalpha() and value >= 0
    o.counts.update({"w": 4})
    o.status = Order.PAID
    o.status = "NEW"
    status: int = o.status
    name: str = Order.Status.Name(o.status)
    units: int = o.total.units
    o.created = datetime(2024, 5, 1, tzinfo=timezone.utc)
    created = Order(created=datetime(2024, 5, 1)).created
    when: datetime = created.ToDatetime()
    o.note = "n"
    o.blob = b"x"
    o.weight = 1
    o.gift = True
    assert o.HasField("note") and o.WhichOneof("_note") == "note"
    copy = Order()
    copy.CopyFrom(o)
    assert copy == o and copy.ByteSize() > 0
    print(added, sku, qtys, first_two, total, count, status, name, units, when)
    """,
    """
    from datetime import date

    from shop_pb import Order

    Order(id="7")  # E
    Order(items=[1])  # E
    Order(items=[{"sku": "a"}], status=1.5)  # E
    Order(created=date(2024, 5, 1))  # E
    Order(idd=7)  # E
    Order(counts={"x": "1"})  # E
    o = Order()
    sku: int = o.items[0].sku  # E
    o.id = "7"  # E
    o.items = []  # E
    o.main = Order.Item()  # E
    o.counts["x"] = "y"  # E
    o.nums.append("3")  # E
    o.created = "2024-05-01"  # E
    o.blob = "x"  # E
    o.note = 1  # E
    """,
)

SCHEMAS["legacy_pb"] = (
    {
        "legacy.proto": """
            syntax = "proto2";
            package legacy;
            enum Level { LOW = 1; HIGH = 2; }
            message Base {
              required int32 id = 1;
              optional string name = 2 [default = "x"];
              optional group Result = 3 { optional string url = 4; repeated string snippets = 5; }
              repeated group Entry = 6 { required int32 k = 7; }
              optional Level level = 8 [default = HIGH];
              extensions 100 to 199;
            }
            message Holder {
              extend Base { optional Holder note = 101; }
              optional int32 z = 1;
            }
            extend Base {
              optional int32 priority = 100;
              repeated string tags = 102;
            }
        """,
    },
    "legacy.proto",
    """
    from legacy_pb import HIGH, LOW, Base, Holder, Level, priority, tags

    b = Base(id=1, result={"url": "u", "snippets": ["s"]}, entry=[{"k": 1}], level="LOW")
    url: str = b.result.url
    snippets: list[str] = list(b.result.snippets)
    k: int = b.entry[0].k
    b.entry.add(k=2)
    level: int = b.level
    assert level == LOW and Level.Value("HIGH") == HIGH
    b.Extensions[priority] = 3
    b.Extensions[tags].append("t")
    b.Extensions[Holder.note].z = 4
    assert b.HasExtension(priority) and b.IsInitialized()
    missing = Base()
    errors: list[str] = missing.FindInitializationErrors()
    print(url, snippets, k, errors, Base.Result(url="v"), Base.Entry(k=3))
    """,
    """
    from legacy_pb import Base

    Base(id=1, result={"url": "u"}, entry=[1])  # E
    Base(level=1.0)  # E
    b = Base()
    b.result.url = 1  # E
    b.entry.append(Base.Result())  # E
    """,
)

SCHEMAS["edition_pb"] = (
    {
        "tree.proto": """
            edition = "2023";
            package tree;
            option features.field_presence = IMPLICIT;
            message Node {
              enum Kind {
                option features.enum_type = CLOSED;
                KIND_LEAF = 1;
                KIND_BRANCH = 2;
              }
              int32 id = 1;
              Node child = 2 [features.message_encoding = DELIMITED];
              repeated int32 vals = 3 [features.repeated_field_encoding = EXPANDED];
              string label = 4 [features.field_presence = EXPLICIT];
              Kind kind = 5 [features.field_presence = EXPLICIT];
              map<string, Node> kids = 6;
            }
        """,
    },
    "tree.proto",
    """
    from edition_pb import Node

    n = Node(id=1, child={"id": 2, "child": {"id": 3}}, vals=range(3), kind="KIND_LEAF")
    deep: int = n.child.child.id
    n.kids["a"].id = 4
    n.kids["b"].child.label = "b"
    kid: Node | None = n.kids.get("a")
    ids: list[int] = sorted(k.id for k in n.kids.values())
    n.label = "root"
    assert n.HasField("label") and n.kind == Node.KIND_LEAF
    print(deep, kid, ids, Node.FromString(n.SerializeToString()))
    """,
    """
    from edition_pb import Node

    Node(child=Node.Kind)  # E
    Node(kids={"a": 1})  # E
    n = Node()
    n.kids["a"] = Node()  # E
    n.vals.extend(["1"])  # E
    """,
)

SCHEMAS["events_pb"] = (
    {
        "events.proto": """
            syntax = "proto3";
            package events;
            import "google/protobuf/any.proto";
            import "google/protobuf/duration.proto";
            import "google/protobuf/empty.proto";
            import "google/protobuf/field_mask.proto";
            import "google/protobuf/struct.proto";
            import "google/protobuf/timestamp.proto";
            import "google/protobuf/wrappers.proto";
            message Event {
              google.protobuf.Timestamp when = 1;
              google.protobuf.Duration took = 2;
              google.protobuf.Struct meta = 3;
              google.protobuf.ListValue tags = 4;
              google.protobuf.Value extra = 5;
              google.protobuf.Int32Value count = 6;
              google.protobuf.Any payload = 7;
              google.protobuf.FieldMask mask = 8;
              google.protobuf.Empty nothing = 9;
              repeated google.protobuf.Timestamp times = 10;
              map<string, google.protobuf.Duration> spans = 11;
              google.protobuf.StringValue label = 12;
            }
            message Ping { string host = 1; }
        """,
    },
    "events.proto",
    """
    from datetime import datetime, timedelta, timezone

    from events_pb import Event, Ping

    e = Event(
        when=datetime(2024, 5, 1, 12, tzinfo=timezone.utc),
        took=timedelta(seconds=1.5),
        meta={"user": "ann", "n": 3, "nested": {"ok": True}, "list": [1, None]},
        tags=["a", 1],
        extra={"string_value": "x"},
        count={"value": 5},
        mask={"paths": ["when"]},
        nothing={},
        times=[datetime(2024, 1, 1), {"seconds": 5}],
        spans={"db": timedelta(milliseconds=20)},
    )
    when: datetime = e.when.ToDatetime()
    aware: datetime = e.when.ToDatetime(timezone.utc)
    took: timedelta = e.took.ToTimedelta()
    end: datetime = e.when + e.took
    gap: timedelta = e.when - e.when
    since: timedelta = datetime(2025, 1, 1) - e.when
    e.when = datetime.now()
    e.when.GetCurrentTime()
    nanos: int = e.when.ToNanoseconds()
    e.took = timedelta(minutes=1)
    e.took.FromMilliseconds(1500)
    e.meta = {"k": 1}
    e.meta["j"] = [1, 2]
    keys: list[str] = e.meta.keys()
    e.tags = [1, "b"]
    e.tags.append(None)
    number: float = e.extra.number_value
    e.extra.string_value = "y"
    count: int = e.count.value
    e.count.value = 6
    e.payload.Pack(Ping(host="h"))
    ping = Ping()
    assert e.payload.Unpack(ping) and e.payload.Is(Ping.DESCRIPTOR)
    e.mask.paths.append("took")
    json_mask: str = e.mask.ToJsonString()
    e.times.append(datetime(2024, 2, 1))
    e.times.add(seconds=7)
    first: datetime = e.times[0].ToDatetime()
    db: timedelta = e.spans["db"].ToTimedelta()
    label: str = e.label.value
    print(when, aware, took, end, gap, since, nanos, keys, number, count, json_mask, first, db)
    print(label, e.meta["k"], e.to_json())
    """,
    """
    from datetime import date, datetime

    from events_pb import Event

    Event(when="2024-05-01T00:00:00Z")  # E
    Event(took=5)  # E
    Event(tags="a")  # E
    Event(times=[date(2024, 1, 1)])  # E
    e = Event()
    e.when = 1714521600  # E
    e.took = datetime(2024, 1, 1)  # E
    e.count = 5  # E
    e.meta = [1]  # E
    d: date = e.took.ToTimedelta()  # E
    """,
)

SCHEMAS["zoo_pb"] = (
    {
        "zoo.proto": """
            syntax = "proto3";
            package zoo;
            message Zoo {
              message Animal {
                enum Kind { CAT = 0; DOG = 1; }
                message Tag { string v = 1; }
                Kind kind = 1;
                repeated Tag tags = 2;
                map<int32, Tag> by_n = 3;
              }
              map<string, Animal> animals = 1;
              map<int64, string> names = 2;
              map<bool, Animal.Kind> kinds = 3;
              oneof where {
                string city = 4;
                int32 zone = 5;
                Animal mascot = 6;
              }
            }
            enum Size { SMALL = 0; LARGE = 1; }
        """,
    },
    "zoo.proto",
    """
    from zoo_pb import LARGE, Size, Zoo

    z = Zoo(
        animals={"rex": {"kind": "DOG", "tags": [{"v": "good"}], "by_n": {1: {"v": "one"}}}},
        names={1: "one"},
        kinds={True: "CAT", False: Zoo.Animal.DOG},
        mascot={"kind": Zoo.Animal.CAT},
    )
    tag: str = z.animals["rex"].tags[0].v
    one: str = z.animals["rex"].by_n[1].v
    kind: int = z.animals["rex"].kind
    kind_name: str = Zoo.Animal.Kind.Name(kind)
    z.animals["cat"].tags.add(v="new")
    z.names[2] = "two"
    names: dict[int, str] = dict(z.names.items())
    z.kinds[True] = "DOG"
    missing: Zoo.Animal | None = z.animals.get("none")
    popped: str = z.names.pop(1)
    which: str | None = z.WhichOneof("where")
    z.city = "Paris"
    assert z.WhichOneof("where") == "city"
    z.ClearField("where")
    size: int = LARGE
    print(tag, one, kind_name, names, missing, popped, which, size, Size.keys())
    """,
    """
    from zoo_pb import Zoo

    Zoo(animals={"rex": 1})  # E
    Zoo(names={"1": "one"})  # E
    z = Zoo()
    z.names[1] = 2  # E
    z.animals["rex"].tags[0].v = 3  # E
    kind: str = z.animals["rex"].kind  # E
    """,
)

SCHEMAS["clash_pb"] = (
    {
        "clash.proto": """
            syntax = "proto3";
            package clash;
            message Item { int32 n = 1; }
            message Thing { int32 t = 1; }
            message str { int32 int = 1; }
            message Clash {
              enum E { keys = 0; VALUE = 1; Clear = 2; }
              string str = 1;
              int32 int = 2;
              bytes bytes = 3;
              float float = 4;
              bool bool = 5;
              repeated string list = 6;
              map<string, int32> dict = 7;
              string type = 8;
              int32 property = 9;
              int32 from = 10;
              int32 class = 11;
              .clash.Item Thing = 12;
              string to_json = 13;
              int32 _builtins = 14;
              int32 Mapping = 15;
              int32 None = 16;
              E e = 17;
              .clash.str s = 18;
              .clash.Thing other = 19;
              repeated int32 ListFields = 20;
              int32 ByteSize = 21;
              int32 _RepeatedScalar = 22;
              repeated int32 _T = 23;
            }
        """,
    },
    "clash.proto",
    """
    from clash_pb import Clash, Thing, str as Str

    c = Clash(
        str="a",
        int=1,
        bytes=b"b",
        float=1.5,
        bool=True,
        list=["x"],
        dict={"k": 1},
        type="t",
        property=2,
        Thing={"n": 3},
        to_json="j",
        _builtins=4,
        Mapping=5,
        e="VALUE",
        s={"int": 6},
        other=Thing(t=7),
        ListFields=[8],
        ByteSize=9,
        _RepeatedScalar=10,
        _T=[11],
    )
    text: str = c.str.upper()
    number: int = c.int + c.property + c.Mapping + c._builtins + c.ByteSize
    number += c._RepeatedScalar + c._T[0]
    n: int = c.Thing.n
    t: int = c.other.t
    inner: int = c.s.int
    s: Str = c.s
    j: str = c.to_json
    c.str = "b"
    c.to_json = "k"
    fields: list[int] = list(c.ListFields)
    keys_value: int = Clash.E.keys + Clash.Clear
    assert Clash.E.Value("VALUE") == 1
    setattr(c, "from", 10)
    print(text, number, n, t, inner, s, j, fields, keys_value, getattr(c, "from"))
    """,
    """
    from clash_pb import Clash

    Clash(str=1)  # E
    Clash(s={"int": 1}, other={"t": 1}, Thing=Clash())  # E
    c = Clash()
    c.int = "1"  # E
    name: str = c.s  # E
    """,
)


# Google's conformance messages (every field type, the well-known types, names such as
# `field_name1`, `FieldName3`, `_field_name4`, `Field_Name16`): their stubs must pass too.
CONFORMANCE = Path(__file__).parents[2] / "crates/amber-core/tests/data/proto/conformance"


def _companion(stub: str) -> str:
    """The module a stub describes, as its header shows it."""
    lines = []
    for line in stub.splitlines():
        if not line.startswith("#"):
            break
        if line.startswith("#     "):
            lines.append(line[6:])
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Each schema's .proto files, stub, companion module and two programs, in one folder."""
    root = tmp_path_factory.mktemp("stubs")
    for module, (files, stubbed, good, bad) in SCHEMAS.items():
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(textwrap.dedent(text))
        if module == "shop_pb":  # through the command line, as the guide shows
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "amber",
                    "proto",
                    "stubs",
                    stubbed,
                    "-I",
                    ".",
                    "-o",
                    f"{module}.pyi",
                ],
                cwd=root,
                check=True,
            )
            stub = (root / f"{module}.pyi").read_text()
        else:
            ns = P.load(root / stubbed, include=[root])
            stub = stubs(ns, files=[stubbed])
            (root / f"{module}.pyi").write_text(stub)
        (root / f"{module}.py").write_text(_companion(stub))
        (root / f"good_{module}.py").write_text(textwrap.dedent(good).lstrip())
        (root / f"bad_{module}.py").write_text(textwrap.dedent(bad).lstrip())
    for path in sorted(CONFORMANCE.glob("*.proto")):
        ns = P.load(path, include=[CONFORMANCE])
        (root / f"conformance_{path.stem}_pb.pyi").write_text(stubs(ns, files=[path.name]))
    (root / "mypy.ini").write_text("[mypy]\n")
    (root / "pyrightconfig.json").write_text(
        json.dumps({"typeCheckingMode": "strict", "pythonVersion": "3.10"})
    )
    return root


def _expected(root: Path) -> set[tuple[str, int]]:
    """(file, line) of every line marked `# E`."""
    marked = set()
    for module in SCHEMAS:
        name = f"bad_{module}.py"
        for i, line in enumerate((root / name).read_text().splitlines(), 1):
            if line.endswith("# E"):
                marked.add((name, i))
    return marked


def test_the_programs_run(project: Path) -> None:
    """What the stubs accept, amber accepts: every good program runs against the companion
    module its stub's header shows."""
    for module in SCHEMAS:
        done = subprocess.run(
            [sys.executable, f"good_{module}.py"], cwd=project, capture_output=True, text=True
        )
        assert done.returncode == 0, (module, done.stderr)


def test_mypy_strict(project: Path) -> None:
    """`mypy --strict` passes the good programs and the stubs (the conformance messages'
    too), and reports each marked line of the bad programs (a value of the wrong type), and
    nothing else."""
    files = [f"good_{m}.py" for m in SCHEMAS] + [f"bad_{m}.py" for m in SCHEMAS]
    files += sorted(p.name for p in project.glob("conformance_*.pyi"))
    done = subprocess.run(
        [
            *(sys.executable, "-m", "mypy", "--strict", "--config-file", "mypy.ini"),
            *("--cache-dir", str(project / ".mypy_cache"), "--no-error-summary", *files),
        ],
        cwd=project,
        capture_output=True,
        text=True,
    )
    found = set()
    for line in done.stdout.splitlines():
        m = re.match(r"(\S+?):(\d+): error: ", line)
        if m:
            found.add((m[1], int(m[2])))
    assert found, done.stdout + done.stderr
    assert found == _expected(project), done.stdout


def _pyright() -> str | None:
    here = Path(sys.executable).parent / "pyright"
    return str(here) if here.exists() else shutil.which("pyright")


def test_pyright_strict(project: Path) -> None:
    """pyright in strict mode agrees: the good programs and the stubs pass, each marked line
    of the bad programs is reported."""
    pyright = _pyright()
    if pyright is None:
        pytest.skip("pyright is not installed (pip install 'pyright[nodejs]')")
    files = [f"good_{m}.py" for m in SCHEMAS] + [f"bad_{m}.py" for m in SCHEMAS]
    files += [f"{m}.pyi" for m in SCHEMAS]
    files += sorted(p.name for p in project.glob("conformance_*.pyi"))
    done = subprocess.run(
        [pyright, "--outputjson", "--pythonpath", sys.executable, *files],
        cwd=project,
        capture_output=True,
        text=True,
    )
    report: dict[str, Any] = json.loads(done.stdout)
    found = set()
    for d in report["generalDiagnostics"]:
        if d["severity"] == "error":
            found.add((Path(d["file"]).name, d["range"]["start"]["line"] + 1))
    # pyright reports an unused import in a bad program: not a line of interest.
    assert found, done.stdout
    assert found == _expected(project), json.dumps(report["generalDiagnostics"], indent=1)


def test_stub_shape(project: Path) -> None:
    """What the checkers cannot see: the well-known types have every helper amber mixes into
    them, fields named by Python keywords are left out (they are reachable by getattr and
    setattr only), and the stub's own names do not collide with the schema's."""
    tree = ast.parse((project / "events_pb.pyi").read_text())
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    for wkt, mixin in [
        ("_Any", _wkt.Any_),
        ("_Timestamp", _wkt.Timestamp),
        ("_Duration", _wkt.Duration),
        ("_FieldMask", _wkt.FieldMask),
        ("_Struct", _wkt.Struct),
        ("_ListValue", _wkt.ListValue),
    ]:
        defined = {n.name for n in classes[wkt].body if isinstance(n, ast.FunctionDef)}
        helpers = {
            name
            for name in dir(mixin)
            if callable(getattr(mixin, name))
            and (not name.startswith("_") or name in {"__add__", "__sub__", "__getitem__"})
            and name in vars(mixin) | vars(_wkt._Seconds) | vars(_wkt._JsonString)
        }
        assert helpers - defined == set(), wkt
    clash = (project / "clash_pb.pyi").read_text()
    init = next(
        n
        for c in ast.parse(clash).body
        if isinstance(c, ast.ClassDef) and c.name == "Clash"
        for n in c.body
        if isinstance(n, ast.FunctionDef) and n.name == "__init__"
    )
    fields = P.load(project / "clash.proto").clash.Clash.DESCRIPTOR.fields
    named = {f.name for f in fields} - {"from", "class", "None"}
    assert {a.arg for a in init.args.kwonlyargs} == named
    assert "import builtins as _builtins_\n" in clash  # a field is named _builtins
    assert "class _RepeatedScalar_(_Repeated[_T_, _In]):" in clash  # and others so
    assert "    def other(self) -> _Thing: ..." in clash  # the field `Thing` hides the class
    assert "_Thing = Thing\n" in clash
