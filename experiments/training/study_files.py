"""The study reports' file steps: reading the runs' results, and writing the generated text between a page's
two markers with the rest of the page kept (a page that does not exist yet, or lacks the markers, gets them)."""
import glob
import json
import os


def load_runs(results):
    runs = []
    for path in sorted(glob.glob(os.path.join(results, "runs", "*.json"))):
        with open(path) as f:
            run = json.load(f)
        run["name"] = os.path.basename(path)[:-5]
        if "config" not in run:  # not an ecekde-train result (e.g. a placeholder that made the driver skip a run)
            print(f"skipping {path}: not a run result")
            continue
        runs.append(run)
    return runs


def write_between(path, begin, end, text, title):
    doc = open(path).read() if os.path.exists(path) else f"# {title}\n\n{begin}\n{end}\n"
    if begin not in doc or end not in doc:
        doc += f"\n{begin}\n{end}\n"
    head, rest = doc.split(begin, 1)
    tail = rest.split(end, 1)[1]
    with open(path, "w") as f:
        f.write(head + begin + "\n" + text + end + tail)
