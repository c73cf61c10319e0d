"""CCL (Conditional Contrastive Learning) for conditional STS (C-STS): W-ACL and BCL, bi- and tri-encoders."""
