// ettools.convert's pybind11 bindings, added to the _ettools module.
#ifndef PYTHON_CONVERT_BINDINGS_H_
#define PYTHON_CONVERT_BINDINGS_H_

#include <pybind11/pybind11.h>

namespace et::python {

// Adds ConvertCall and convert(call) to `m`.
void AddConvertBindings(pybind11::module_& m);

}  // namespace et::python

#endif  // PYTHON_CONVERT_BINDINGS_H_
