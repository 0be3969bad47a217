"""The HTML report: one self-contained file, escaped, and rendered by a real browser."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

import sc_mlir
from sc_mlir.cli import app

runner = CliRunner()
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium on this machine (Debian's chromium package; .ci/run installs it)")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = tmp_path_factory.mktemp("html") / "report.html"
    result = runner.invoke(app, ["analyze", "--example", "--html", str(path), "-f", "json"])
    assert result.exit_code == 1 and path.is_file()
    return path


def test_report_is_self_contained(report):
    text = report.read_text()
    assert "<title>sc-mlir analysis of" in text
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", text)
    assert "<link" not in text and "<script src" not in text
    assert text.count('<img class="plot"') == 2 and "data:image/png;base64," in text
    assert 'class="sortable"' in text


def test_report_renders_in_headless_chromium(report, tmp_path):
    browser = chromium()
    profile = tmp_path / "profile"
    dom = subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                          "--virtual-time-budget=3000", "--dump-dom", report.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert "sc-mlir analysis of" in html and "%232" in html
    rendered = re.findall(r'data-rendered="(\d+)x(\d+)"', html)
    assert len(rendered) == 2 and all(int(w) > 100 and int(h) > 100 for w, h in rendered)
    assert html.count('data-sortable-ready="1"') >= 3  # the scripts ran
    shot = tmp_path / "page.png"
    result = subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                             "--window-size=1280,2400", f"--screenshot={shot}", report.as_uri()],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and shot.stat().st_size > 20_000
    from matplotlib.image import imread

    pixels = imread(str(shot))
    assert pixels.std() > 0.05  # not a blank page


def test_diff_report(tmp_path):
    path = tmp_path / "diff.html"
    result = runner.invoke(app, ["diff", str(FIXTURES / "diff/limit_halved/before"),
                                 str(FIXTURES / "diff/limit_halved/after"), "--html", str(path)])
    assert result.exit_code == 0
    text = path.read_text()
    assert "before:" in text and "→ after:" in text and "-11,720" in text
    assert text.count('<img class="plot"') == 1


def test_everything_from_the_dump_is_escaped(tmp_path):
    dump = tmp_path / "evil.mlir"
    dump.write_text('func.func @"<img src=x onerror=alert(1)>"() {\n'
                    '  %a = memref.alloca() : memref<200000xf32, 201> loc("<b>x.py</b>":1:1)\n'
                    "  return\n}\n")
    analysis = sc_mlir.load(dump).analyze()
    for html in (analysis.to_html(str(dump)), analysis._repr_html_(),
                 analysis.reports[0]._repr_html_()):
        assert "<img src=x" not in html and "<b>x.py</b>" not in html
        assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_notebook_reprs():
    analysis = sc_mlir.load(sc_mlir.example_path()).analyze()
    assert "<table" in analysis._repr_html_()
    assert "%232" in analysis.report("sc_embedding_lookup_fwd", 201)._repr_html_()
    explanations = sc_mlir.explain(sc_mlir.example_log_path(), sc_mlir.example_path())
    assert "matched <b>%232</b>" in explanations._repr_html_()
    change = sc_mlir.diff(*sc_mlir.example_diff_paths())
    assert "resized" in change._repr_html_()


def test_every_table_sits_in_a_box_that_scrolls(report):
    text = report.read_text()
    assert text.count("<table") == text.count('<div class="table-box"><table') >= 3
    assert ".table-box { max-width: 100%; overflow-x: auto;" in text


def sorted_by_the_report_script(values: list[str]) -> list[str]:
    """`values` sorted by the report's own sort-key and comparison functions, run by node."""
    import json

    from sc_mlir.render.html import _SCRIPT

    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("no node on this machine to run the report's script")
    functions = _SCRIPT.split("// sort keys: BEGIN")[1].split("// sort keys: END")[0]
    program = (functions + f"\nvar values = {json.dumps(values)};\n"
               "console.log(JSON.stringify(values.slice().sort(function (a, b) {"
               " return compareKeys(sortKey(a), sortKey(b)); })));")
    result = subprocess.run([node, "-e", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_name_column_sorts_in_natural_order():
    assert sorted_by_the_report_script(["%232", "%3", "%alloca_10", "%20", "%alloca_2",
                                        "%alloca"]) == [
        "%3", "%20", "%232", "%alloca", "%alloca_2", "%alloca_10"]
    # Words as numbers, by value (thousands commas included), before any text.
    assert sorted_by_the_report_script(["23,440", "64", "-11,720", "1,024", "?"]) == [
        "-11,720", "64", "1,024", "23,440", "?"]


@pytest.mark.parametrize("kind", ["analysis", "diff"])
def test_no_report_is_wider_than_a_1300_pixel_window(kind, report, tmp_path):
    browser = chromium()
    if kind == "diff":
        page = tmp_path / "diff.html"
        result = runner.invoke(app, ["diff", str(FIXTURES / "diff/limit_halved/before"),
                                     str(FIXTURES / "diff/limit_halved/after"), "--html",
                                     str(page)])
        assert result.exit_code == 0
    else:
        page = report
    dom = subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
                          "--window-size=1300,900", "--virtual-time-budget=3000", "--dump-dom",
                          page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    [(page_width, window_width)] = re.findall(r'data-layout="(\d+)in(\d+)"', dom.stdout)
    assert 0 < int(page_width) <= int(window_width), (page_width, window_width)
