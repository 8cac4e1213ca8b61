"""Package list for setuptools: every folder under tasks/, adapters/ and judges/ is installed
inside `lmms_agentic`, so a new benchmark folder needs no edit here (the mapping is in pyproject.toml)."""

from setuptools import find_packages, setup

MAPPED = {"tasks": "lmms_agentic.tasks", "adapters": "lmms_agentic.adapters", "judges": "lmms_agentic.judges"}

packages = ["lmms_agentic", *find_packages(where=".", include=["lmms_agentic.*"])]
for folder, name in MAPPED.items():
    packages.append(name)
    packages.extend(f"{name}.{sub}" for sub in find_packages(where=folder))

setup(packages=packages)
