/* A shared library that is no game module (no mc_game_module_get): the hot reload test's
 * "missing symbol" case. */
int mc_not_a_game(int x);
int mc_not_a_game(int x) { return x + 1; }
