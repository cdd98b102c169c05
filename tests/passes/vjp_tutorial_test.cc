// The tutorial's f(W1, W2, W3, x) = g(W3, g(W2, g(W1, x))), g(W, x) = sin(dot(W, x)): its forward
// and backward programs must be exactly what JAX prints (jax-outputs.md §3.1, Source D).
#include <catch2/catch.hpp>

#include "ir/parse/parser.h"
#include "ir/print/printer.h"
#include "passes/fwd_bwd_table.h"
#include "passes/vjp.h"
#include "tests/golden/golden.h"

using namespace cjax;

TEST_CASE("vjp of the tutorial's f matches JAX's forward and backward programs") {
  JaxprRef f = parse_jaxpr(golden::text("tutorial_f.jaxpr"));
  VjpResult r = vjp_jaxpr(*f);
  CHECK(r.num_residuals == 9);
  CHECK(to_string(r.fwd) == golden::text("tutorial_f_fwd.jaxpr"));
  CHECK(to_string(r.bwd) == golden::text("tutorial_f_bwd.jaxpr"));
}

TEST_CASE("print_fwd_bwd columns lay out like the tutorial's rich table") {
  JaxprRef f = parse_jaxpr(golden::text("tutorial_f.jaxpr"));
  VjpResult r = vjp_jaxpr(*f);
  const char* expected =
      "  forward computation:                                         backward computation:\n"
      "\n"
      "  { lambda ; a:f32[5,4] b:f32[6,5] c:f32[7,6] d:f32[4]. let    { lambda ; a:f32[5,4] "
      "b:f32[6,5] c:f32[7,6] d:f32[4] e:f32[5] f:f32[5] g:f32[6] h:f32[6]\n"
      "      e:f32[5] = dot_general[                                      i:f32[7] j:f32[7]. let\n"
      "        dimension_numbers=(([1], [0]), ([], []))                   k:f32[7] = mul j i\n"
      "        preferred_element_type=float32                             l:f32[6] = dot_general[\n"
      "      ] a d                                                          "
      "dimension_numbers=(([0], [0]), ([], []))\n"
      "      f:f32[5] = sin e                                               "
      "preferred_element_type=float32\n"
      "      g:f32[5] = cos e                                             ] k c\n"
      "      h:f32[6] = dot_general[                                      m:f32[7,6] = "
      "dot_general[\n"
      "        dimension_numbers=(([1], [0]), ([], []))                     "
      "dimension_numbers=(([], []), ([], []))\n"
      "        preferred_element_type=float32                               "
      "preferred_element_type=float32\n"
      "      ] b f                                                        ] k h\n"
      "      i:f32[6] = sin h                                             n:f32[6] = mul l g\n"
      "      j:f32[6] = cos h                                             o:f32[5] = dot_general[\n"
      "      k:f32[7] = dot_general[                                        "
      "dimension_numbers=(([0], [0]), ([], []))\n"
      "        dimension_numbers=(([1], [0]), ([], []))                     "
      "preferred_element_type=float32\n"
      "        preferred_element_type=float32                             ] n b\n"
      "      ] c i                                                        p:f32[6,5] = "
      "dot_general[\n"
      "      l:f32[7] = sin k                                               "
      "dimension_numbers=(([], []), ([], []))\n"
      "      m:f32[7] = cos k                                               "
      "preferred_element_type=float32\n"
      "    in (l, a, b, c, d, g, f, j, i, m) }                            ] n f\n"
      "                                                                   q:f32[5] = mul o e\n"
      "                                                                   r:f32[4] = dot_general[\n"
      "                                                                     "
      "dimension_numbers=(([0], [0]), ([], []))\n"
      "                                                                     "
      "preferred_element_type=float32\n"
      "                                                                   ] q a\n"
      "                                                                   s:f32[5,4] = "
      "dot_general[\n"
      "                                                                     "
      "dimension_numbers=(([], []), ([], []))\n"
      "                                                                     "
      "preferred_element_type=float32\n"
      "                                                                   ] q d\n"
      "                                                                 in (s, p, m, r) }\n";
  CHECK(fwd_bwd_columns(to_string(r.fwd), to_string(r.bwd)) == expected);
}
