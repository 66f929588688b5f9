"""A client for the tilesmith autotuning service, for build systems; standard library only.

    from tilesmith_client import Client, Fusion
    client = Client("http://127.0.0.1:8470")
    answer = client.query(Fusion.from_file("gelu.hlo"), target="host", tune_if_missing=True)
    if not answer.found and answer.job_id:
        client.wait(answer.job_id, progress=lambda job: print(job.state, job.progress))

The HTTP API it speaks is docs/api.md of the tilesmith repository.
"""

from .client import (DEFAULT_URL, Answer, Client, Fusion, FusionLike, Job, Kernel,
                     ProgressCallback, TilesmithError)

__all__ = ["DEFAULT_URL", "Answer", "Client", "Fusion", "FusionLike", "Job", "Kernel",
           "ProgressCallback", "TilesmithError"]
__version__ = "0.1.0"
