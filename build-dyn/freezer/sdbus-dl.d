build-dyn/freezer/sdbus-dl.o: freezer/sdbus-dl.c common/macro.h \
 common/time-util.h freezer/sdbus-dl.h
common/macro.h:
common/time-util.h:
freezer/sdbus-dl.h:
