"""ecekde.Report: what ecekde.report() returns (docs/python.md, The report)."""
import json
from collections.abc import Mapping
from types import SimpleNamespace


def _fields(value):
    """A JSON value with its objects as attribute namespaces (r.crossfit[0].ce_interval.lower)."""
    if isinstance(value, dict):
        return SimpleNamespace(**{key: _fields(v) for key, v in value.items()})
    if isinstance(value, list):
        return [_fields(v) for v in value]
    return value


# The sections of the document offered as attributes (mmce is absent for one column: None).
_SECTIONS = ("input", "settings", "summary", "crossfit", "kde", "binned", "mmce")


class Report(Mapping):
    """The library's calibration report, as `ecekde report` shows it.

    ``str(report)`` is the text `ecekde report` prints for the same input and options, ``to_json()`` the
    document `ecekde report --json` prints and ``to_dict()`` that document as a dict; a notebook shows
    its tables (``_repr_html_``). The document's sections are attributes whose fields are attributes too:
    ``summary``, ``crossfit``, ``kde``, ``binned``, ``mmce`` (None for one column), ``settings``, ``input``.
    The report is also a read-only mapping of those sections (``report["summary"]["accuracy"]``), as the
    dict that ecekde.report() returned before it returned a Report.
    """

    def __init__(self, computed):
        self._computed = computed
        self._document = json.loads(computed.json())

    def __str__(self):
        return self._computed.text()

    def __repr__(self):
        s = self._document["summary"]
        return f"<ecekde.Report: {s['n']} samples, {s['k']} columns; print() it for the tables>"

    def _repr_html_(self):
        return self._computed.html()

    def to_json(self):
        """The JSON document `ecekde report --json` prints (indented by 2, without the final newline)."""
        return self._computed.json()

    def to_dict(self):
        """The JSON document as a new dict."""
        return json.loads(self._computed.json())

    def __getitem__(self, section):
        return self._document[section]

    def __iter__(self):
        return iter(self._document)

    def __len__(self):
        return len(self._document)

    def __getattr__(self, section):
        # Called only for names that are not attributes of the class: the document's sections.
        if section not in _SECTIONS:
            raise AttributeError(f"'Report' object has no attribute '{section}'")
        return _fields(self._document.get(section))

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(_SECTIONS))
