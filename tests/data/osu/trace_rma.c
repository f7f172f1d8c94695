/* commbench's MPI call logger for the one-sided programs (not OSU's code): like
 * trace.c, preloaded into the unmodified OMB binaries, it writes every window,
 * synchronization and RMA call (with its byte count), barrier and MPI_Wtime to
 * /tmp/osutrace/out.<rank> (tests/data/osu/README.md: how the osu family's
 * one-sided procedure was read off them). */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static FILE *f;
static void open_f(void){ if(!f){int r; PMPI_Comm_rank(MPI_COMM_WORLD,&r); char n[64]; snprintf(n,64,"/tmp/osutrace/out.%d",r); f=fopen(n,"w");}}
#define LOG(...) do{ if(f) fprintf(f, __VA_ARGS__);}while(0)
static const char *org0; /* the first origin address of a size: offsets are logged relative to it */
static long org(const void *o){ if(!org0) org0=o; return (long)((const char*)o-org0); }
static int tsz(MPI_Datatype t){int s; PMPI_Type_size(t,&s); return s;}
int MPI_Init(int *a, char ***b){int r=PMPI_Init(a,b); open_f(); return r;}
int MPI_Init_thread(int *a, char ***b, int q, int *p){int r=PMPI_Init_thread(a,b,q,p); open_f(); return r;}
int MPI_Finalize(void){if(f)fclose(f);f=0;return PMPI_Finalize();}
double MPI_Wtime(void){LOG("Wtime\n");return PMPI_Wtime();}
int MPI_Barrier(MPI_Comm c){LOG("Barrier\n");return PMPI_Barrier(c);}
int MPI_Send(const void *b,int c,MPI_Datatype t,int d,int g,MPI_Comm m){LOG("Send %d %d\n",c*tsz(t),d);return PMPI_Send(b,c,t,d,g,m);}
int MPI_Recv(void *b,int c,MPI_Datatype t,int d,int g,MPI_Comm m,MPI_Status*s){LOG("Recv %d %d\n",c*tsz(t),d);return PMPI_Recv(b,c,t,d,g,m,s);}
int MPI_Reduce(const void*a,void*b,int c,MPI_Datatype t,MPI_Op o,int r,MPI_Comm m){LOG("Reduce %d\n",c);return PMPI_Reduce(a,b,c,t,o,r,m);}
int MPI_Allreduce(const void*a,void*b,int c,MPI_Datatype t,MPI_Op o,MPI_Comm m){LOG("Allreduce %d\n",c);return PMPI_Allreduce(a,b,c,t,o,m);}
int MPI_Bcast(void*a,int c,MPI_Datatype t,int r,MPI_Comm m){LOG("Bcast %d\n",c*tsz(t));return PMPI_Bcast(a,c,t,r,m);}
int MPI_Win_create(void*b,MPI_Aint s,int u,MPI_Info i,MPI_Comm c,MPI_Win*w){LOG("Win_create %ld disp%d\n",(long)s,u);return PMPI_Win_create(b,s,u,i,c,w);}
int MPI_Win_allocate(MPI_Aint s,int u,MPI_Info i,MPI_Comm c,void*b,MPI_Win*w){LOG("Win_allocate %ld disp%d\n",(long)s,u);return PMPI_Win_allocate(s,u,i,c,b,w);}
int MPI_Win_create_dynamic(MPI_Info i,MPI_Comm c,MPI_Win*w){LOG("Win_create_dynamic\n");return PMPI_Win_create_dynamic(i,c,w);}
int MPI_Win_attach(MPI_Win w,void*b,MPI_Aint s){LOG("Win_attach %ld\n",(long)s);return PMPI_Win_attach(w,b,s);}
int MPI_Win_detach(MPI_Win w,const void*b){LOG("Win_detach\n");return PMPI_Win_detach(w,b);}
int MPI_Win_free(MPI_Win*w){LOG("Win_free\n");org0=0;return PMPI_Win_free(w);}
int MPI_Get_address(const void*l,MPI_Aint*a){LOG("Get_address\n");return PMPI_Get_address(l,a);}
int MPI_Win_lock(int k,int r,int a,MPI_Win w){LOG("Win_lock %s %d assert%d\n",k==MPI_LOCK_SHARED?"shared":"exclusive",r,a);return PMPI_Win_lock(k,r,a,w);}
int MPI_Win_unlock(int r,MPI_Win w){LOG("Win_unlock %d\n",r);return PMPI_Win_unlock(r,w);}
int MPI_Win_lock_all(int a,MPI_Win w){LOG("Win_lock_all assert%d\n",a);return PMPI_Win_lock_all(a,w);}
int MPI_Win_unlock_all(MPI_Win w){LOG("Win_unlock_all\n");return PMPI_Win_unlock_all(w);}
int MPI_Win_flush(int r,MPI_Win w){LOG("Win_flush %d\n",r);return PMPI_Win_flush(r,w);}
int MPI_Win_flush_local(int r,MPI_Win w){LOG("Win_flush_local %d\n",r);return PMPI_Win_flush_local(r,w);}
int MPI_Win_flush_all(MPI_Win w){LOG("Win_flush_all\n");return PMPI_Win_flush_all(w);}
int MPI_Win_flush_local_all(MPI_Win w){LOG("Win_flush_local_all\n");return PMPI_Win_flush_local_all(w);}
int MPI_Win_sync(MPI_Win w){LOG("Win_sync\n");return PMPI_Win_sync(w);}
int MPI_Win_fence(int a,MPI_Win w){LOG("Win_fence assert%d\n",a);return PMPI_Win_fence(a,w);}
int MPI_Win_post(MPI_Group g,int a,MPI_Win w){LOG("Win_post assert%d\n",a);return PMPI_Win_post(g,a,w);}
int MPI_Win_start(MPI_Group g,int a,MPI_Win w){LOG("Win_start assert%d\n",a);return PMPI_Win_start(g,a,w);}
int MPI_Win_complete(MPI_Win w){LOG("Win_complete\n");return PMPI_Win_complete(w);}
int MPI_Win_wait(MPI_Win w){LOG("Win_wait\n");return PMPI_Win_wait(w);}
int MPI_Group_incl(MPI_Group g,int n,const int*r,MPI_Group*o){LOG("Group_incl %d first%d\n",n,n?r[0]:-1);return PMPI_Group_incl(g,n,r,o);}
int MPI_Put(const void*o,int oc,MPI_Datatype ot,int tr,MPI_Aint td,int tc,MPI_Datatype tt,MPI_Win w){LOG("Put %d %d disp%ld origin+%ld\n",oc*tsz(ot),tr,(long)td,org(o));return PMPI_Put(o,oc,ot,tr,td,tc,tt,w);}
int MPI_Get(void*o,int oc,MPI_Datatype ot,int tr,MPI_Aint td,int tc,MPI_Datatype tt,MPI_Win w){LOG("Get %d %d disp%ld origin+%ld\n",oc*tsz(ot),tr,(long)td,org(o));return PMPI_Get(o,oc,ot,tr,td,tc,tt,w);}
int MPI_Accumulate(const void*o,int oc,MPI_Datatype ot,int tr,MPI_Aint td,int tc,MPI_Datatype tt,MPI_Op op,MPI_Win w){LOG("Accumulate %d %d disp%ld op%s\n",oc*tsz(ot),tr,(long)td,op==MPI_SUM?"SUM":"other");return PMPI_Accumulate(o,oc,ot,tr,td,tc,tt,op,w);}
int MPI_Get_accumulate(const void*o,int oc,MPI_Datatype ot,void*r,int rc,MPI_Datatype rt,int tr,MPI_Aint td,int tc,MPI_Datatype tt,MPI_Op op,MPI_Win w){LOG("Get_accumulate %d %d disp%ld op%s\n",oc*tsz(ot),tr,(long)td,op==MPI_SUM?"SUM":"other");return PMPI_Get_accumulate(o,oc,ot,r,rc,rt,tr,td,tc,tt,op,w);}
int MPI_Fetch_and_op(const void*o,void*r,MPI_Datatype t,int tr,MPI_Aint td,MPI_Op op,MPI_Win w){LOG("Fetch_and_op %d %d disp%ld op%s\n",tsz(t),tr,(long)td,op==MPI_SUM?"SUM":"other");return PMPI_Fetch_and_op(o,r,t,tr,td,op,w);}
int MPI_Compare_and_swap(const void*o,const void*c,void*r,MPI_Datatype t,int tr,MPI_Aint td,MPI_Win w){LOG("Compare_and_swap %d %d disp%ld\n",tsz(t),tr,(long)td);return PMPI_Compare_and_swap(o,c,r,t,tr,td,w);}
int MPI_Allgather(const void*a,int c,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,MPI_Comm m){LOG("Allgather %d\n",c*tsz(t));return PMPI_Allgather(a,c,t,b,c2,t2,m);}
int MPI_Sendrecv(const void*a,int c,MPI_Datatype t,int d,int g,void*b,int c2,MPI_Datatype t2,int s,int g2,MPI_Comm m,MPI_Status*st){LOG("Sendrecv %d %d\n",c*tsz(t),d);return PMPI_Sendrecv(a,c,t,d,g,b,c2,t2,s,g2,m,st);}
int MPI_Isend(const void*b,int c,MPI_Datatype t,int d,int g,MPI_Comm m,MPI_Request*q){LOG("Isend %d %d\n",c*tsz(t),d);return PMPI_Isend(b,c,t,d,g,m,q);}
int MPI_Irecv(void*b,int c,MPI_Datatype t,int d,int g,MPI_Comm m,MPI_Request*q){LOG("Irecv %d %d\n",c*tsz(t),d);return PMPI_Irecv(b,c,t,d,g,m,q);}
int MPI_Alloc_mem(MPI_Aint s,MPI_Info i,void*b){LOG("Alloc_mem %ld\n",(long)s);return PMPI_Alloc_mem(s,i,b);}
