"""Cross-source duplicate clusters: the same work held by NTRS and OSTI (or twice by one of them)
is shown once, with its copies and the reasons they were merged.

Public API (used by search and web): :func:`cluster_of`, :func:`clusters_for`, :class:`Cluster`;
the batch job :func:`run_dedup` (``searchnasa dedup``) and its config (:func:`load_config`).
"""

from searchnasa.dedup.clustering import DedupReport, rebuild_clusters, records_to_compare, run_dedup
from searchnasa.dedup.config import DedupConfig, SplitRule, load_config, parse_config
from searchnasa.store.clusters import Cluster, ClusterMember, MergeReason, cluster_of, clusters_for, has_clusters

__all__ = [
    "Cluster", "ClusterMember", "DedupConfig", "DedupReport", "MergeReason", "SplitRule", "cluster_of",
    "clusters_for", "has_clusters", "load_config", "parse_config", "rebuild_clusters", "records_to_compare",
    "run_dedup",
]
