"""`amber bench --from RESULTS`: a run's report and plots rebuilt from its results.json, timing
nothing, the same tables as the run wrote, under the run's own machine and date."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amber.cli import main
from tests.bench.support import assert_plots


def studies_part(report: Path) -> str:
    """A report from its first study on: the header before it names how the report was made."""
    text = report.read_text()
    return text[text.index("\n## ") :]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run")
    args = ["bench", "--tiny", "--studies", "objects,scaling", "--contenders", "amber"]
    assert main([*args, "--no-progress", "--out", str(out)]) == 0
    return out


def test_the_report_and_plots_come_back_from_the_results_alone(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["bench", "--from", str(run_dir / "results.json"), "--out", str(tmp_path)]) == 0
    assert "W1-M" in capsys.readouterr().out
    again = tmp_path / "report.md"
    assert studies_part(again) == studies_part(run_dir / "report.md")
    header = again.read_text().split("\n## ")[0]
    machine = json.loads((run_dir / "results.json").read_text())["machine"]
    assert f"- Date: {machine['date_utc']} UTC" in header  # the run's date, not today's
    assert "Rendered from" in header and "--tiny" in header
    assert not (tmp_path / "results.json").exists()  # nothing was measured
    assert_plots(again, "objects_ratio", "scaling", "scaling_ratio")


def test_what_is_not_a_run_is_refused_clearly(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    for text in ("not json", "{}", '{"machine": {}, "config": {"mode": "tiny"}}'):
        bad.write_text(text)
        assert main(["bench", "--from", str(bad), "--out", str(tmp_path / "o")]) == 2
        assert "not the results.json of an amber bench run" in capsys.readouterr().err
    assert main(["bench", "--from", str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capsys.readouterr().err
    data = json.loads((run_dir / "results.json").read_text())
    data["config"]["contenders"]["codec"].append("no-such-codec")
    bad.write_text(json.dumps(data))
    assert main(["bench", "--from", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "no-such-codec" in capsys.readouterr().err
