/* cargo-launch: <assert.h> for NVRTC. NVRTC defines assert itself; it is defined again here, with
 * no include guard, so that NDEBUG set before the include turns it off as C specifies. */
#undef assert
#ifdef NDEBUG
#  define assert(condition) (static_cast<void>(0))
#else
#  define assert(condition) \
      ((condition) ? static_cast<void>(0) \
                   : __assertfail(#condition, __FILE__, __LINE__, __PRETTY_FUNCTION__, sizeof(char)))
#endif
