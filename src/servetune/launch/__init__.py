"""Start, watch and stop vLLM (`launcher`); the doctor that reads why a start failed (`doctor`,
with the table of vLLM's failure messages in `diagnoses` and argparse's refusals in
`flag_errors`). To add a doctor diagnosis, see the recipe in `diagnoses.py`'s docstring."""
