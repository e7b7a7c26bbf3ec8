"""Run entries are stored as Arrow IPC now; the column is renamed to say what it holds.
Existing Parquet blobs keep working: workbench.collections.runstore.decode recognises both formats."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("workbench", "0001_initial")]

    operations = [
        migrations.RenameField(model_name="rundata", old_name="parquet", new_name="table"),
    ]
