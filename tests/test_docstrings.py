"""Every public docstring example runs."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import sc_mlir

MODULES = sorted(m.name for m in pkgutil.walk_packages(sc_mlir.__path__, "sc_mlir."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failures == 0
