"""Signals of the services that change a collection in bulk, writing rows without ``post_save`` (a split run
import's ``bulk_update``, a qrels import's columns): the apps above react to them as to a saved row (evaluation
asks for the collection's board once the write is committed), since a lower app never calls one above it."""

from django.dispatch import Signal

#: sent inside the writing transaction, with ``collection_id``, after a bulk write of runs or judgments
collection_changed = Signal()
