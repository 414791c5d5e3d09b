"""The docs stay true: the CLI reference matches --help, the README's commands exist."""

from __future__ import annotations

from pathlib import Path

from servetune.cli.reference import reference

ROOT = Path(__file__).resolve().parents[2]


def test_cli_reference_is_up_to_date() -> None:
    current = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert current == reference(), "regenerate: python -m servetune.cli.reference > docs/cli.md"


def test_readme_opens_with_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("```bash", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.strip().splitlines()]
    assert commands == ["make demo", "make test"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "\ndemo:" in makefile and "\ntest:" in makefile
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
