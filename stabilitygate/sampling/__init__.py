"""Drawing the samples: the concurrent sampler, its retry policy, the samples file and the progress display."""

from stabilitygate.sampling.progress import Progress
from stabilitygate.sampling.retry import Backoff
from stabilitygate.sampling.sampler import SamplingOutcome, sample_cases
from stabilitygate.sampling.samples_file import SamplesWriter, read_samples

__all__ = ["Backoff", "Progress", "SamplesWriter", "SamplingOutcome", "read_samples", "sample_cases"]
