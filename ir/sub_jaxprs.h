// The jaxprs an eqn holds in its params: a call's or a loop's body, a cond's branches (a tuple
// or list of jaxprs). For passes that walk a program and everything below it.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "ir/jaxpr.h"

namespace cjax {

// The items of a tuple or list param, or null for any other value.
inline const std::vector<ParamValue>* param_items(const ParamValue& v) {
  if (v.is<ParamTuple>()) return &v.as<ParamTuple>().items;
  if (v.is<ParamList>()) return &v.as<ParamList>().items;
  return nullptr;
}

// Every non-null jaxpr in `eqn`'s params, directly or as an item of a tuple or list param.
inline std::vector<const Jaxpr*> sub_jaxprs(const Eqn& eqn) {
  std::vector<const Jaxpr*> out;
  auto add = [&](const ParamValue& v) {
    if (v.is<JaxprRef>() && v.as<JaxprRef>()) out.push_back(v.as<JaxprRef>().get());
  };
  for (const auto& [key, value] : eqn.params) {
    add(value);
    if (const std::vector<ParamValue>* items = param_items(value))
      for (const ParamValue& item : *items) add(item);
  }
  return out;
}

// `params` with every non-null jaxpr (as sub_jaxprs finds them) replaced by `fn` of it.
inline Params map_sub_jaxprs(const Params& params, const std::function<Jaxpr(const Jaxpr&)>& fn) {
  auto map = [&](const ParamValue& v) -> ParamValue {
    if (v.is<JaxprRef>() && v.as<JaxprRef>())
      return JaxprRef(std::make_shared<const Jaxpr>(fn(*v.as<JaxprRef>())));
    return v;
  };
  Params out;
  for (const auto& [key, value] : params) {
    if (value.is<ParamTuple>() || value.is<ParamList>()) {
      std::vector<ParamValue> items;
      for (const ParamValue& item : *param_items(value)) items.push_back(map(item));
      out.set(key, value.is<ParamTuple>() ? ParamValue(ParamTuple{std::move(items)})
                                          : ParamValue(ParamList{std::move(items)}));
    } else {
      out.set(key, map(value));
    }
  }
  return out;
}

}  // namespace cjax
