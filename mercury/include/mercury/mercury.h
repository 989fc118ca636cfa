/* Mercury: reliable UDP messaging (include this one header). */
#ifndef MC_MERCURY_MERCURY_H
#define MC_MERCURY_MERCURY_H

#include "mercury/address.h"
#include "mercury/bundle.h"
#include "mercury/channel.h"
#include "mercury/interface.h"
#include "mercury/nub.h"
#include "mercury/request.h"
#include "mercury/status.h"

#endif
