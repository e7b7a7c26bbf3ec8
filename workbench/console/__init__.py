"""The organizer's console: its pages, forms and tables."""
