"""Corpora by reference and near-duplicate detection."""
