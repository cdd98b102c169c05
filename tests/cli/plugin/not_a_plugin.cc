// A shared library without the cjax plugin symbols, for the CLI's error path.
extern "C" int not_a_cjax_plugin() {
  return 42;
}
