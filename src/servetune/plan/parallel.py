"""How a model is spread over GPUs, as the step-time model needs it: the links between GPUs,
what tensor, data and expert parallelism each GPU holds and moves, and how many routed experts
a step reads.

Sources:
- experts a step touches: B tokens each choosing k of E experts (top-k routing, no capacity
  limit in vLLM's fused MoE) touch E x (1 - (1 - k/E)^B) distinct experts per MoE layer in
  expectation (each expert is missed by all B tokens with probability (1 - k/E)^B).
- MoE sharding (vllm/model_executor/layers/fused_moe/config.py, FusedMoEParallelConfig.make,
  0.10-0.17): without `--enable-expert-parallel` every expert is split over all TP x DP GPUs
  (each GPU reads 1/(TP x DP) of every touched expert); with it, each GPU owns E/(TP x DP)
  whole experts, so a step waits for the GPU with the most touched experts (`ep_max_touched`).
  With DP > 1 the DP engines step together and the MoE layer sees every engine's tokens; with
  DP > 1 and EP tokens are dispatched to and combined from their experts' GPUs (all-to-all
  kernels: `use_all2all_kernels` = dp_size > 1 and use_ep).
- tensor parallelism: two all-reduces of tokens x hidden per layer (after attention and after
  the MLP; vLLM's RowParallelLinear), a ring moving 2(TP-1)/TP of the data over the link.
- links, per direction between two GPUs: NVLink 3 (A100) 300 GB/s, NVLink 4 (H100/H200)
  450 GB/s, NVLink 5 (B200) 900 GB/s (NVIDIA datasheets); AMD Infinity Fabric (xGMI) on
  MI300X/MI325X 7 links x 64 GB/s = 448 GB/s, MI250X 4 x 50 GB/s (AMD datasheets); PCIe 4.0 x16
  ~25 GB/s achieved, PCIe 5.0 ~50 GB/s. The latency of one small all-reduce: ~8 us over NVLink
  (vLLM's custom all-reduce, one shot in shared memory), ~10 us over xGMI (vLLM's quick
  all-reduce on ROCm), ~30 us over PCIe (NCCL through the host bridge): vendor and NCCL-tests
  orders of magnitude, not fitted (the fit records have no PCIe TP run).
"""

from __future__ import annotations

import math
from functools import cache

from servetune.review.hardware import GpuSpec

GB = 1e9
_NVLINK_BYTES_S = {"Ampere": 300 * GB, "Hopper": 450 * GB, "Blackwell": 900 * GB}
_XGMI_BYTES_S = {"CDNA 3": 448 * GB, "CDNA 4": 1075 * GB, "CDNA 2": 200 * GB}
_PCIE_BYTES_S = {"Hopper": 50 * GB, "Blackwell": 50 * GB}
PCIE4_BYTES_S = 25 * GB
ALLREDUCE_LATENCY_S = {"nvlink": 8e-6, "xgmi": 10e-6, "pcie": 30e-6}
# Between nodes (pipeline stages, `--pipeline-parallel-size`): one 400 Gb/s NIC per GPU, the
# HGX reference design's ConnectX-7 (NVIDIA's datasheet); ~20 us for one small send with its
# NCCL/RDMA set-up (an order of magnitude, not fitted: no fit record publishes a PP command)
INTERNODE_BYTES_S = 50 * GB
INTERNODE_LATENCY_S = 20e-6
GPUS_PER_NODE = 8  # HGX/DGX and AMD's OAM platforms: 8 GPUs joined by NVLink or xGMI
# the OAM parts whose GPUs are joined by Infinity Fabric in a server (the PCIe cards are not,
# unless bridged, which a --gpus spec cannot say)
_XGMI_PARTS = ("MI300", "MI325", "MI350", "MI355", "MI250", "MI308")


def link(spec: GpuSpec) -> tuple[str, float]:
    """(kind, bytes/s per direction) of the link between two GPUs of this kind."""
    if spec.platform == "rocm":
        if any(part in spec.name for part in _XGMI_PARTS):
            return "xgmi", _XGMI_BYTES_S.get(spec.architecture, 200 * GB)
        return "pcie", PCIE4_BYTES_S
    if spec.nvlink:
        return "nvlink", _NVLINK_BYTES_S.get(spec.architecture, 300 * GB)
    return "pcie", _PCIE_BYTES_S.get(spec.architecture, PCIE4_BYTES_S)


def touched(experts: int, top_k: int, tokens: int) -> float:
    """Expected distinct experts `tokens` tokens choosing `top_k` of `experts` touch."""
    if experts <= 0 or tokens <= 0:
        return 0.0
    return experts * (1 - (1 - top_k / experts) ** tokens)


@cache
def ep_max_touched(experts: int, top_k: int, tokens: int, ranks: int) -> float:
    """Under expert parallelism: the expected most touched experts on any of `ranks` GPUs,
    each owning experts/ranks whole experts (a step lasts as long as its busiest GPU).

    Each expert is touched with probability p = 1 - (1 - k/E)^B; a rank's count is taken as
    Binomial(E/ranks, p), the ranks as independent: E[max] = sum_j (1 - F(j)^ranks)."""
    if experts <= 0 or tokens <= 0:
        return 0.0
    per_rank = max(1, experts // max(ranks, 1))
    p = 1 - (1 - top_k / experts) ** tokens
    if ranks <= 1 or p >= 1.0:
        return per_rank * min(p, 1.0)
    cdf, expected = 0.0, 0.0
    for j in range(per_rank):  # P(max > j) = 1 - P(all <= j)
        cdf += math.comb(per_rank, j) * p**j * (1 - p) ** (per_rank - j)
        expected += 1 - min(cdf, 1.0) ** ranks
    return expected


def ring_allreduce_s(size_bytes: float, tp: int, link_bytes_s: float, latency_s: float) -> float:
    """One all-reduce of `size_bytes` over `tp` GPUs: 2(TP-1)/TP of it crosses each link."""
    if tp <= 1:
        return 0.0
    return size_bytes * 2 * (tp - 1) / tp / link_bytes_s + latency_s


def all_to_all_s(size_bytes: float, ranks: int, link_bytes_s: float, latency_s: float) -> float:
    """Dispatching (or combining) `size_bytes` of tokens to experts spread over `ranks` GPUs:
    (ranks - 1)/ranks of it leaves each GPU."""
    if ranks <= 1:
        return 0.0
    return size_bytes * (ranks - 1) / ranks / link_bytes_s + latency_s
