/* Directory trees the tests make (kernel caches, scratch directories) and remove. */
#ifndef AKX_TEST_TREE_H
#define AKX_TEST_TREE_H

/* Removes dir and everything below it, links not followed; quiet about what is not there. */
void tfx_remove_tree(const char *dir);

#endif
