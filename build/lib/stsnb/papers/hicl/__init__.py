"""HiCL (Wu et al.): hierarchical (segment + sequence) contrastive learning of sentence embeddings."""
