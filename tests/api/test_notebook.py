"""The walkthrough notebook runs top to bottom, and is committed without outputs."""

from __future__ import annotations

import nbformat
import pytest
from conftest import REPO

NOTEBOOK = REPO / "notebooks" / "walkthrough.ipynb"


def test_committed_without_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.outputs == [] and c.execution_count is None for c in code)


def test_walkthrough_executes_without_error(tmp_path):
    pytest.importorskip("ipykernel", reason="the test extra installs ipykernel")
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=180, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == 4  # the stack, the contributors, the diff, the roll-up
    html = " ".join(o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {}))
    assert "allocator-limited" in html and "%232" in html
    text = " ".join(t for o in outputs for t in (o.get("text", ""),
                                                  o.get("data", {}).get("text/plain", "")))
    assert "what if: 140,704 -> 117,264 words, fits" in text
    assert "model/embedding.py:88" in text
    # "Check before you compile": the failure's report as text, the fix, then it fits.
    from sc_mlir.read import jaxbridge

    if jaxbridge.available():
        text = " ".join(o.get("text", "") for o in outputs if o.output_type == "stream")
        assert "overflow  func gather_rows  space 201 (tile_spmem)" in text
        assert "shrink scratch_shapes entry 1 (%arg6" in " ".join(text.split())
        assert "12879 rows words: fits" in text
