import django_tables2 as tables


class RunTable(tables.Table):
    tag = tables.Column(verbose_name="Run")
    team = tables.Column()
    contributes = tables.BooleanColumn(verbose_name="Contributed to the pool", yesno="yes,no")
    pool_priority = tables.Column(verbose_name="Priority")
    num_topics = tables.Column(verbose_name="Topics")
    num_entries = tables.Column(verbose_name="Entries")
    imported_at = tables.DateTimeColumn(verbose_name="Imported", format="Y-m-d H:i")

    class Meta:
        attrs = {"class": "data"}
        order_by = ("tag",)


class TopicTable(tables.Table):
    qid = tables.Column(verbose_name="Topic")
    title = tables.Column()
    pool_size = tables.Column(verbose_name="Pooled")
    judged = tables.Column(verbose_name="Judged")
    relevant = tables.Column(verbose_name="Relevant")

    class Meta:
        attrs = {"class": "data"}
