"""The local run viewer and static reports: `sandbox view RUNS_DIR` and `sandbox report RUN --out FILE.html`.

* `sandbox.viewer.catalog`: the runs under a folder, with kind, status, scenario, times, calls, tokens and
  headline figures, read fast and tolerant of half-written or corrupt directories.
* `sandbox.viewer.page`: a run page described as sections (`Chart`, `Table`, `Figures`, `Policies`, `Cells`).
  A kind lays out its page by naming a `view` function in its `RunKind` (`view(path) -> [Section, ...]`); a kind
  without one gets the default page (its tables, its figures, the runs inside it and its transcripts), so a new
  kind has a page without a change here.
* `sandbox.viewer.transcripts`: one page of a transcript's calls at a time, filtered by run, epoch, agent, role and
  text, so a run of any size opens at once.
* `sandbox.viewer.server`: the read-only web server (Starlette under uvicorn) that serves only files inside the
  runs folder and the viewer's own assets (Plotly from the installed `plotly` package: no network).
* `sandbox.viewer.report`: the same run page as one self-contained HTML file.

The browser side is one script (`static/app.js`) that both the server and the report use; it writes every text
it shows through `textContent`, so a model's answer holding `<script>` shows as text.
"""
