"""The command line: one module per command, one table of commands, one error boundary.

Layout:
- `main.py`: `COMMANDS` (the table), `build_parser`, and `main`, the one error boundary: a
  `ServetuneError` prints `error: ...` / `hint: ...` and exits with the error type's
  `exit_code`; Ctrl-C exits 130.
- `command.py`: `Command` (name, help, options type, handler), `Streams`, `ExitCode`.
- `options.py`: options several commands share, declared once: `OutputArgs` (--format,
  --debug), `add_language_argument`/`language_of` (--lang), `ReviewArgs` (the command to review
  and --file, --gpus, --vllm-version, --model-config, --online) and `review()`.
- one module per command: check, explain, serve, doctor, bench, compare, accept.

To add a command `servetune NAME` (say `tune`):
1. Write `cli/tune.py` with a frozen dataclass of its options (`TuneArgs`) that has
   `add_arguments(cls, parser)` (every option with a `help=`; use the shared groups above rather
   than declaring --format/--lang again) and `from_namespace(cls, ns)` (turn the namespace into
   typed values, raise `UsageError` for bad combinations); a handler
   `run(args: TuneArgs, streams: Streams) -> ExitCode` that calls the core (imported inside
   the function, so `servetune check` stays fast), renders to `streams.stdout`, and returns an
   `ExitCode` (raise a `ServetuneError` for errors; never print them or call sys.exit); and
   `COMMAND = Command(name="tune", help="...", options=TuneArgs, run=run)` (with
   `takes_serve_command=True` when it reads a `vllm serve` command after `--`).
2. Add `tune` to the `from servetune.cli import ...` line of `main.py` and one line
   `tune.COMMAND,` to `COMMANDS`.
3. Document its exit codes in the module docstring, test it in `tests/cli/` (in-process via
   `main([...])`), and regenerate the reference:
   `.venv/bin/python -m servetune.cli.reference > docs/cli.md`.
"""
