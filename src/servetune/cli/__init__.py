"""The command line: one module per command, one table of commands, one error boundary.

This package is internal (the library API is `servetune.__all__`); nothing but
`servetune.__main__` and the `servetune` console script imports it.

Layout:
- `main.py`: `COMMANDS` (the table), `build_parser`, and `main`, the one error boundary: a
  `ServetuneError` prints `error: ...` / `hint: ...` and exits with the error type's
  `exit_code`; Ctrl-C exits 130.
- `command.py`: `Command` (name, help, options type, handler), `Streams`, `ExitCode`.
- `options.py`: options several commands share, declared once: `OutputArgs` (--format,
  --debug), `add_language_argument`/`language_of` (--lang), `ReviewArgs` (the command to review
  and --file, --gpus, --vllm-version, --model-config, --online) and `review()`.
- one module per command, in `COMMANDS`' order: `check`, `explain`, `serve`, `doctor`, `bench`,
  `compare`, `accept`, `tune` (with `tune_executor`: --executor local or ray), `plan`,
  `quality`.
- `reference.py`: docs/cli.md, generated from the parsers' --help.

To add a command `servetune NAME` (say `watch`):
1. Options: in `cli/watch.py`, a frozen dataclass `WatchArgs` with
   `add_arguments(cls, parser)` (every option with a `help=`; use the shared groups above rather
   than declaring --format/--lang again) and `from_namespace(cls, ns)` (turn the namespace into
   the typed config the core takes, and raise `UsageError` for bad values and combinations, so
   the core never sees a flag).
2. Handler: `run(args: WatchArgs, streams: Streams) -> ExitCode` builds one config value, calls
   the core (imported inside the function, so `servetune check` stays fast), hands the result
   to its view in `render/`, writes it to `streams.stdout`, and returns an `ExitCode` (raise a
   `ServetuneError` for errors; never print them or call sys.exit). Document the exit codes in
   the module's docstring.
3. Registration: `COMMAND = Command(name="watch", help="...", options=WatchArgs, run=run)`
   (`takes_serve_command=True` when it reads a `vllm serve` command after `--`); add `watch`
   to the `from servetune.cli import ...` line of `main.py` and `watch.COMMAND,` to `COMMANDS`
   where `servetune --help` should list it.
4. Texts: every sentence its view prints goes in `texts/` (`<area>_en.py` and
   `<area>_zh_tw.py`, a new area as `texts/__init__.py` says); the parity test checks both.
5. Tests and docs: test it in-process in `tests/cli/` (or the flow's test folder) via
   `main([...])`, asserting the exact output and exit code; regenerate the CLI reference with
   `python -m servetune.cli.reference > docs/cli.md` (`tests/cli/test_docs.py` fails while it
   is out of date) and add the command to the README's table of commands.
"""
