"""Fills a PDF form from a JSON file of field values (an example file)."""
import json, sys

print(json.load(open(sys.argv[1])))
