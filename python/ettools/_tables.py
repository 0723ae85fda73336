"""Column tables from the C++ core (python/table.h) as pandas DataFrames.

A table arrives as {name: numpy array, or (codes, categories)}; the arrays own
the C++ vectors, so no cell is copied on the way, and strings arrive once per
distinct value as pandas Categoricals.
"""
import pandas as pd


def frame(columns):
    """A DataFrame of a C++ column table, in its column order."""
    data = {}
    for name, value in columns.items():
        if isinstance(value, tuple):
            codes, categories = value
            data[name] = pd.Categorical.from_codes(codes, categories=categories)
        else:
            data[name] = value
    return pd.DataFrame(data, copy=False)


def rows(records, **renames):
    """A DataFrame of a list of JSON objects (the report's rows)."""
    df = pd.DataFrame.from_records(records) if records else pd.DataFrame()
    return df.rename(columns=renames) if renames else df
