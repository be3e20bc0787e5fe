/* ad_commands.c: the REPL commands of autodiff. */
#include "ad/ad.h"
#include "lang/commands.h"

void sr_ad_commands_init(void);

void sr_ad_commands_init(void) {}
