import django_tables2 as tables


class _RateColumns(tables.Table):
    judged = tables.Column(verbose_name="Judged")
    assigned = tables.Column(verbose_name="Assigned")
    per_hour = tables.Column(verbose_name="Judgments / hour")
    median_seconds = tables.Column(verbose_name="Median s / document")
    cannot_judge = tables.Column(verbose_name="Cannot judge")
    flag = tables.Column(verbose_name="Check", empty_values=())

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
    middle_half = tables.Column(verbose_name="Middle half, s / document", orderable=False)
    kappa = tables.Column(verbose_name="Mean κ with others")
    last_activity = tables.DateTimeColumn(verbose_name="Last judgment", format="Y-m-d H:i")

    def render_kappa(self, value):
        return "—" if value != value else f"{value:.2f}"

    class Meta:
        sequence = ("assessor", "...")
        attrs = {"class": "data"}


def _fmt(value, digits=3):
    return "—" if value is None or value != value else f"{value:.{digits}f}"


class StatColumn(tables.Column):
    """A statistic shown with three decimals, or a dash where it is undefined (NaN)."""

    def render(self, value):
        return _fmt(value)


class PairAgreementTable(tables.Table):
    assessor_a = tables.Column(verbose_name="Assessor A")
    assessor_b = tables.Column(verbose_name="Assessor B")
    n_shared = tables.Column(verbose_name="Shared documents")
    agreement = StatColumn(verbose_name="Same grade")
    kappa = StatColumn(verbose_name="Cohen's κ (binary)")
    weighted_kappa = StatColumn(verbose_name="Weighted κ")
    alpha = StatColumn(verbose_name="Krippendorff's α (ordinal)")

    class Meta:
        attrs = {"class": "data"}


class TopicAgreementTable(tables.Table):
    qid = tables.Column(verbose_name="Topic")
    n_docs = tables.Column(verbose_name="Documents with ≥2 assessors")
    n_assessors = tables.Column(verbose_name="Assessors")
    agreement = StatColumn(verbose_name="Unanimous")
    kappa = StatColumn(verbose_name="Cohen's κ (binary)")
    alpha = StatColumn(verbose_name="Krippendorff's α (ordinal)")

    class Meta:
        attrs = {"class": "data"}
