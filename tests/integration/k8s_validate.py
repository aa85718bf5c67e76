#!/usr/bin/python3
"""Checks Kubernetes manifests offline against the API's own models.

Debian's python3-kubernetes carries the generated models of every API type
(kubernetes/client/models, v1_job.py ...). Each document is turned into its
model the way the client turns a server's answer into one
(ApiClient.deserialize): required fields missing and values of the wrong
type raise there. The model is then written back out; a key of the document
that does not come back is a field the type does not have (a misspelt or
misplaced key, which the API server would reject or drop).

Usage: k8s_validate.py FILE   (prints one line per document; exit 1 on any problem)
"""
import json
import sys

import yaml
from kubernetes import client


class Answer:
    """What ApiClient.deserialize reads: a response with a .data body."""

    def __init__(self, document):
        self.data = json.dumps(document)


def model_name(document):
    version = document["apiVersion"].split("/")[-1]  # "batch/v1" -> "v1"
    return version[0].upper() + version[1:] + document["kind"]  # "V1Job"


def dropped(original, written, where=""):
    problems = []
    if isinstance(original, dict):
        for key, value in original.items():
            if not isinstance(written, dict) or key not in written:
                problems.append(where + "." + key)
            else:
                problems += dropped(value, written[key], where + "." + key)
    elif isinstance(original, list) and isinstance(written, list):
        for i, (a, b) in enumerate(zip(original, written)):
            problems += dropped(a, b, "%s[%d]" % (where, i))
    return problems


def check(document):
    api = client.ApiClient()
    name = model_name(document)
    try:
        model = api.deserialize(Answer(document), name)
    except (ValueError, AttributeError, TypeError) as e:
        return ["%s: %s" % (name, e)]
    return ["%s has no field %s" % (name, p) for p in dropped(document, api.sanitize_for_serialization(model))]


def main():
    bad = 0
    with open(sys.argv[1]) as f:
        for document in yaml.safe_load_all(f):
            if document is None:
                continue
            problems = check(document)
            label = "%s %s" % (document.get("kind"), document.get("metadata", {}).get("name"))
            print(label + ": " + ("; ".join(problems) if problems else "valid " + model_name(document)))
            bad += bool(problems)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
