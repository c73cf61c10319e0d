"""HiCL (Wu, Xiao, Vydiswaran, EMNLP 2023 Findings): hierarchical contrastive learning of sentence embeddings.

- ``segments``: Section 3.1, the queue rule, segment framing and encoding, weighted / unweighted pooling (Table 3),
  Table 2's length distribution.
- ``objectives``: Eq. 1 (+ ESimCSE's queue, + SNCSE's margin loss), Eq. 2 via ``stsnb.losses.hicl_local_loss``
  (Table 4's same-sequence relation, Appendix A.8's summation / averaging), ``alpha L_l + (1 - alpha) L_g``.
- ``variants``: Table 1's baselines, SimCSE, ESimCSE (word repetition, momentum queue), SNCSE (negation, prompts).
- ``training``: one model / loss per (baseline, HiCL on/off) trained with ``stsnb.train.fit`` and STS-B dev selection.
"""
