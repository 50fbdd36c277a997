"""pytest configuration: the suite runs against the installed evoxc package (make installs it into .venv)."""

import warnings

import pytest

import evoxc  # noqa: F401  (fail early and clearly when the package is not installed)


@pytest.fixture(autouse=True)
def _quiet_constant_warnings():
    # evoxc.constant warns by design; tests that check the warning use pytest.warns.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*constant\\(\\) embeds.*")
        yield
