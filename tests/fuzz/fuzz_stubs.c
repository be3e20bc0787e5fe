/* fuzz_stubs.c: what the fuzz programs leave out of the library.
 *
 * sr_prims_init() calls every rule family's initialiser through
 * sr_rules_init_all() (lib/prims/rules.c), and the rule families pull in
 * the checker and the rest.  The parser and the printer use the primitive
 * table's names and print rules only, so the fuzz programs, which compile
 * the library sources they need themselves, stop here instead.
 */
void sr_rules_init_all(void);

void sr_rules_init_all(void) {}
