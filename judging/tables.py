import django_tables2 as tables


class _RateColumns(tables.Table):
    judged = tables.Column(verbose_name="Judged")
    assigned = tables.Column(verbose_name="Assigned")
    per_hour = tables.Column(verbose_name="Judgments / hour")
    median_seconds = tables.Column(verbose_name="Median s / document")

    def render_per_hour(self, value):
        return "—" if value != value else f"{value:.0f}"

    def render_median_seconds(self, value):
        return "—" if value != value else f"{value:.1f}"


class TopicProgressTable(_RateColumns):
    qid = tables.Column(verbose_name="Topic")

    class Meta:
        sequence = ("qid", "...")
        attrs = {"class": "data"}


class AssessorProgressTable(_RateColumns):
    assessor = tables.Column(verbose_name="Assessor")

    class Meta:
        sequence = ("assessor", "...")
        attrs = {"class": "data"}
