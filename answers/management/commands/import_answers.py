from answers.imports import answers_import
from workbench.management.base import WorkbenchCommand


class Command(WorkbenchCommand):
    help = ("Validate and import answer runs (TREC RAG / AutoJudge JSON lines, one run per file) into a collection. "
            "All files are checked first; if any has a problem, nothing is imported.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("files", nargs="+", metavar="FILE")
        parser.add_argument("--no-pool", action="store_true", help="The runs' cited segments and answers are not pooled")
        parser.add_argument("--description", default="")
        parser.add_argument("--replace", action="store_true", help="Replace answer runs whose tag exists")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        files = opts["files"]
        with self.progress(2 * len(files), "file", "answer runs (check, then store)") as bar:
            imported = answers_import(collection=collection, sources=files, replace=opts["replace"],
                                      contributes=not opts["no_pool"], description=opts["description"],
                                      progress=bar.update)
        for item in imported:
            run = item.run
            self.stdout.write(f"imported answer run {run.tag!r} ({run.kind}): {run.num_topics} topics, "
                              f"{run.num_sentences} sentences, {run.num_citations} citations"
                              + (" (replaced)" if item.replaced else ""))
        self.stdout.write(f"imported {len(imported)} answer runs into {collection.slug!r}")
