// The model: a two-layer network's squared error against a target.
#pragma once

#include <cjax/cjax.h>

cjax::Array loss(const cjax::Array& W1, const cjax::Array& W2, const cjax::Array& x,
                 const cjax::Array& y);
