"""The study reports' last step: their generated text written between a page's two markers, the rest of the
page kept (a page that does not exist yet, or lacks the markers, gets them)."""
import os


def write_between(path, begin, end, text, title):
    doc = open(path).read() if os.path.exists(path) else f"# {title}\n\n{begin}\n{end}\n"
    if begin not in doc or end not in doc:
        doc += f"\n{begin}\n{end}\n"
    head, rest = doc.split(begin, 1)
    tail = rest.split(end, 1)[1]
    with open(path, "w") as f:
        f.write(head + begin + "\n" + text + end + tail)
